package decisionlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/orkspace/ork/internal/decision"
)

// Genesis is the prev of a log's first line.
const Genesis = ""

// hashKey starts the hash member every line ends with.
const hashKey = `,"hash":"`

// hashOf is the hash of a line's body (its JSON without the hash) after prev.
func hashOf(prev string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// encode is e's line chained after prev, without its newline.
func encode(e decision.Entry, prev string) ([]byte, decision.Entry, error) {
	e.Prev, e.Hash = prev, ""
	body, err := json.Marshal(e)
	if err != nil {
		return nil, e, fmt.Errorf("encode entry %s: %w", e.Decision, err)
	}
	e.Hash = hashOf(prev, body)
	line := make([]byte, 0, len(body)+len(hashKey)+len(e.Hash)+2)
	line = append(line, body[:len(body)-1]...)
	line = append(line, hashKey...)
	line = append(line, e.Hash...)
	line = append(line, '"', '}')
	return line, e, nil
}

// decode splits a line into its body and hash and decodes its entry; it does not check the
// hash.
func decode(line []byte) (body []byte, e decision.Entry, err error) {
	i := bytes.LastIndex(line, []byte(hashKey))
	const hexLen = sha256.Size * 2
	if i < 0 || len(line) != i+len(hashKey)+hexLen+2 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, e, errors.New(`the line does not end with its "hash"`)
	}
	hash := string(line[i+len(hashKey) : i+len(hashKey)+hexLen])
	body = append(append([]byte{}, line[:i]...), '}')
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, e, fmt.Errorf("not an entry: %w", err)
	}
	if e.Hash != "" {
		return nil, e, errors.New(`the line holds "hash" twice`)
	}
	e.Hash = hash
	return body, e, nil
}
