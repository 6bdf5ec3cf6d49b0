package decision

import (
	"bytes"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// canonMemo bounds the documents a Canon remembers. A CRD's children of one kind carry one
// field set (field names and list keys, not values), so a handful covers the usual case; a
// CRD whose children differ more re-decodes, no worse than without the memo.
const canonMemo = 64

// Canon puts FieldsV1 documents in the field set's own encoding (OwnedFieldsDigest),
// remembering the last documents it saw: decoding and encoding a field set is most of what
// the drift test without a call costs a child, and nearly every child's document is one
// already seen. The zero value is ready; nil remembers nothing. Safe for concurrent use.
type Canon struct {
	mu   sync.Mutex
	seen map[string]string
}

// fields is raw in canonical form.
func (c *Canon) fields(raw []byte) string {
	if c == nil {
		return canonicalFields(raw)
	}
	c.mu.Lock()
	out, ok := c.seen[string(raw)]
	c.mu.Unlock()
	if ok {
		return out
	}
	out = canonicalFields(raw)
	c.mu.Lock()
	if c.seen == nil || len(c.seen) >= canonMemo {
		c.seen = make(map[string]string, canonMemo)
	}
	c.seen[string(raw)] = out
	c.mu.Unlock()
	return out
}

// canonicalFields is a FieldsV1 document in the field set's own encoding; the raw bytes when
// they do not decode (still a digest of what the server holds).
func canonicalFields(raw []byte) string {
	var set fieldpath.Set
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return string(raw)
	}
	out, err := set.ToJSON()
	if err != nil {
		return string(raw)
	}
	return string(out)
}
