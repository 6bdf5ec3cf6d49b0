package exchange

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/orkspace/ork/internal/dotpath"
)

// ParseRedact parses redact paths: dot-paths as in payload.*.exclude ("spec.password").
func ParseRedact(paths []string) ([]dotpath.Path, error) {
	out := make([]dotpath.Path, 0, len(paths))
	for _, s := range paths {
		p, err := dotpath.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("redact path %q: %w", s, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// decode parses one JSON document, numbers kept as written (json.Number), so that a masked
// body re-encodes to the same values.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON document")
	}
	return v, nil
}

// maskRequest masks a decoded PreparedRequest in place: the redact paths at the body's root
// and in args, and in the object and every child the data of Secrets and the redact paths.
func maskRequest(doc any, redact []dotpath.Path) {
	root, ok := doc.(map[string]any)
	if !ok {
		return
	}
	redactAt(root, redact)
	maskCallbackTokens(root)
	if args, ok := root["args"].(map[string]any); ok {
		redactAt(args, redact)
	}
	forEachObject(root, func(obj map[string]any) { maskObject(obj, redact) })
}

// maskCallbackTokens masks the completion callback's tokens (prepared.callback and
// prepared.operation.callback): each authorises a callback to ork, so no recording or trace
// keeps one, whatever the redact paths say. The URL, which ends in the token, keeps where
// ork listens and loses the token.
func maskCallbackTokens(root map[string]any) {
	prepared, _ := root["prepared"].(map[string]any)
	op, _ := prepared["operation"].(map[string]any)
	for _, parent := range []map[string]any{prepared, op} {
		cb, ok := parent["callback"].(map[string]any)
		if !ok {
			continue
		}
		if tok, _ := cb["token"].(string); tok != "" {
			if u, ok := cb["url"].(string); ok {
				cb["url"] = strings.ReplaceAll(u, tok, Redacted)
			}
		}
		if _, has := cb["token"]; has {
			cb["token"] = Redacted
		}
	}
}

// maskResponse masks a decoded RemoteReconcileResult in place: the redact paths at its root
// and in status, and in every resources entry (a full object, or an intent entry's fields)
// the data of Secrets and the redact paths.
func maskResponse(doc any, redact []dotpath.Path) {
	root, ok := doc.(map[string]any)
	if !ok {
		return
	}
	redactAt(root, redact)
	if status, ok := root["status"].(map[string]any); ok {
		redactAt(status, redact)
	}
	list, _ := root["resources"].([]any)
	for _, e := range list {
		entry, ok := e.(map[string]any)
		if !ok {
			continue
		}
		fields, intent := entry["fields"].(map[string]any)
		if !intent {
			maskObject(entry, redact)
			continue
		}
		if entry["type"] == "secret" {
			maskValues(fields["data"], RedactedBase64)
			maskValues(fields["stringData"], Redacted)
		}
		redactAt(fields, redact)
	}
}

// forEachObject calls fn on the request's object, on every child in prepared.children and
// on every object of prepared.related (a related Secret's data is masked like a child's).
func forEachObject(root map[string]any, fn func(map[string]any)) {
	if obj, ok := root["object"].(map[string]any); ok {
		fn(obj)
	}
	prepared, _ := root["prepared"].(map[string]any)
	related, _ := prepared["related"].(map[string]any)
	for _, list := range related {
		objs, _ := list.([]any)
		for _, o := range objs {
			if obj, ok := o.(map[string]any); ok {
				fn(obj)
			}
		}
	}
	children, _ := prepared["children"].(map[string]any)
	for _, byName := range children {
		m, _ := byName.(map[string]any)
		for _, child := range m {
			if obj, ok := child.(map[string]any); ok {
				fn(obj)
			}
		}
	}
}

// lastApplied is the annotation kubectl apply writes: the whole applied manifest, a
// Secret's data in clear included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// maskObject masks a Kubernetes object: a Secret's data and stringData values and its
// last-applied annotation (a copy of its data), then the redact paths.
func maskObject(obj map[string]any, redact []dotpath.Path) {
	if obj["kind"] == "Secret" && obj["apiVersion"] == "v1" {
		maskValues(obj["data"], RedactedBase64)
		maskValues(obj["stringData"], Redacted)
		md, _ := obj["metadata"].(map[string]any)
		if ann, ok := md["annotations"].(map[string]any); ok {
			if _, has := ann[lastApplied]; has {
				ann[lastApplied] = Redacted
			}
		}
	}
	redactAt(obj, redact)
}

// maskValues replaces every value of a map, keeping its keys (which Secret keys exist is no
// secret, and it shows what the reconciler sent).
func maskValues(v any, mask string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k := range m {
		m[k] = mask
	}
}

// redactAt masks the value at each path below m, in place; a path that does not exist is
// ignored.
func redactAt(m map[string]any, paths []dotpath.Path) { maps.Copy(m, Redact(m, paths)) }

// Redact is m with the value at each redact path replaced by Redacted, as a recording masks
// it; a path that does not exist is ignored. m is never changed (it may be an informer's
// cached object): only the maps along a path that exists are copied, and m itself is
// returned when none does. For what must hide what a recording hides, such as the inputs
// digest of a decision, which status.lastDecision makes public.
func Redact(m map[string]any, redact []dotpath.Path) map[string]any {
	for _, p := range redact {
		m, _ = redactCopy(m, p)
	}
	return m
}

// redactCopy is m with the value at p masked, copied along p; m and false when p is not in
// it.
func redactCopy(m map[string]any, p dotpath.Path) (map[string]any, bool) {
	if len(p) == 0 {
		return m, false
	}
	v, ok := m[p[0]]
	if !ok {
		return m, false
	}
	if len(p) == 1 {
		v = Redacted
	} else if child, isMap := v.(map[string]any); !isMap {
		return m, false
	} else if v, ok = redactCopy(child, p[1:]); !ok {
		return m, false
	}
	out := maps.Clone(m)
	out[p[0]] = v
	return out, true
}

// dropVolatile removes from a masked request what differs between a recording and its
// replay: prepared.attempt and prepared.dryRun; in the object and every child the volatile
// metadata, the uid of each ownerReference and the lastTransitionTime of each condition.
func dropVolatile(root map[string]any) {
	if prepared, ok := root["prepared"].(map[string]any); ok {
		delete(prepared, "attempt")
		delete(prepared, "dryRun")
		dropOperationClock(prepared["operation"])
	}
	forEachObject(root, func(obj map[string]any) {
		if meta, ok := obj["metadata"].(map[string]any); ok {
			for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "managedFields", "selfLink"} {
				delete(meta, k)
			}
			refs, _ := meta["ownerReferences"].([]any)
			for _, r := range refs {
				if ref, ok := r.(map[string]any); ok {
					delete(ref, "uid")
				}
			}
		}
		status, _ := obj["status"].(map[string]any)
		dropOperationClock(status["operation"])
		conds, _ := status["conditions"].([]any)
		for _, c := range conds {
			if cond, ok := c.(map[string]any); ok {
				delete(cond, "lastTransitionTime")
			}
		}
	})
}

// dropOperationClock removes what a held operation owes to the clock and to the object's
// uid (its start, its deadline, its key), in prepared.operation and in the object's
// status.operation: a replay polls the same operation at another time.
func dropOperationClock(v any) {
	if op, ok := v.(map[string]any); ok {
		for _, k := range []string{"startedAt", "deadline", "key"} {
			delete(op, k)
		}
	}
}

// Digest identifies a PreparedRequest for replay: the SHA-256 of its canonical JSON (keys
// sorted) after masking (Secret data and the redact paths, as in a recording) and without
// the volatile fields (see dropVolatile). Two requests with the same digest ask the same
// question about the same state: same key, gvk, object, args, trigger, generation, deleting
// and children.
func Digest(request []byte, redact []dotpath.Path) (string, error) {
	doc, err := decode(request)
	if err != nil {
		return "", fmt.Errorf("digest request: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return "", errors.New("digest request: not a JSON object")
	}
	maskRequest(root, redact)
	dropVolatile(root)
	canon, err := json.Marshal(root) // encoding/json sorts map keys: canonical
	if err != nil {
		return "", fmt.Errorf("digest request: %w", err)
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
