package exchange

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orkspace/ork/internal/dotpath"
)

// secretMark starts every secret the fuzz target plants, so that finding one in a recording
// can only mean a leak.
const secretMark = "ORK-SECRET-"

// FuzzRecordingMask: a recording never holds a secret value. One arbitrary secret is planted
// wherever the masking rules promise to hide it: Secret data (base64) and stringData in a
// child, in a full Secret and in an intent secret of the response, and at an arbitrary
// redact path in the object, the args, the status and an intent entry's fields. The recorded
// file then holds neither the secret nor its base64 in any string (keys included), in any
// encoding json.Marshal may choose.
//
//	go test ./internal/exchange -run '^$' -fuzz FuzzRecordingMask -fuzztime 5m
func FuzzRecordingMask(f *testing.F) {
	for _, s := range [][4]string{
		{"hunter2", "pw", "spec.password", "db"},
		{"<&>\u2028\"\\", "tls.key", `metadata.annotations.a\.b`, "a.b"},
		{"", "", "password", ""},
		{"x", "data", "data.stringData", "secret"},
		{"y", "k", "kind", "Secret"},
		{"z", "k", "spec", "c"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, secret, key, redact, child string) {
		secret = secretMark + secret
		enc := base64.StdEncoding.EncodeToString([]byte(secret))
		names := key + "\x00" + redact + "\x00" + child
		if !utf8.ValidString(secret) || strings.Contains(names, secret) || strings.Contains(names, enc) {
			return // JSON carries text; and keys and names are no secret, so they must not hold it
		}
		paths, err := ParseRedact([]string{redact})
		if err != nil {
			return
		}
		req, resp := plantSecrets(secret, enc, key, child, paths[0])
		e, err := newEntry(Exchange{Key: "ns/web", Trigger: "resync", URL: "http://127.0.0.1/r", Request: req, StatusCode: 200, Response: resp},
			paths)
		if err != nil {
			t.Fatalf("record: %v", err)
		}
		file, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(file, &doc); err != nil {
			t.Fatal(err)
		}
		for _, raw := range []json.RawMessage{e.Request, e.Response} {
			var body any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("recorded body is not JSON: %v", err)
			}
			doc = []any{doc, body}
		}
		if where := findString(doc, "$", func(s string) bool { return strings.Contains(s, secret) || strings.Contains(s, enc) }); where != "" {
			t.Fatalf("the recording holds the secret at %s:\n%s", where, file)
		}
	})
}

// plantSecrets builds a PreparedRequest and a RemoteReconcileResult with secret (enc, its
// base64) everywhere the mask must hide it.
func plantSecrets(secret, enc, key, child string, redact dotpath.Path) (req, resp []byte) {
	object := map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp", "metadata": map[string]any{"name": "web"}}
	setAt(object, redact, secret)
	args := map[string]any{"image": "nginx"}
	setAt(args, redact, secret)
	secretObj := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name},
			"data": map[string]any{key: enc}, "stringData": map[string]any{key: secret}}
	}
	request := map[string]any{"key": "ns/web", "object": object, "args": args,
		"prepared": map[string]any{"trigger": "resync", "children": map[string]any{"secret": map[string]any{child: secretObj(child)}}}}
	status := map[string]any{"phase": "Ready"}
	setAt(status, redact, secret)
	fields := map[string]any{"name": "cm"}
	setAt(fields, redact, secret)
	result := map[string]any{"result": "ok", "status": status, "resources": []any{
		secretObj("full"),
		map[string]any{"type": "secret", "fields": map[string]any{"name": "s", "data": map[string]any{key: enc}, "stringData": map[string]any{key: secret}}},
		map[string]any{"type": "configmap", "fields": fields},
	}}
	req, _ = json.Marshal(request)
	resp, _ = json.Marshal(result)
	return req, resp
}

// setAt sets the value at p below m, making (or replacing with) maps on the way.
func setAt(m map[string]any, p dotpath.Path, v any) {
	for i, k := range p {
		if i == len(p)-1 {
			m[k] = v
			return
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
}

// findString returns the path of the first string (a value or a key) below v that bad
// reports, or "".
func findString(v any, at string, bad func(string) bool) string {
	switch x := v.(type) {
	case string:
		if bad(x) {
			return at
		}
	case map[string]any:
		for k, e := range x {
			if bad(k) {
				return at + " key " + k
			}
			if w := findString(e, at+"."+k, bad); w != "" {
				return w
			}
		}
	case []any:
		for i, e := range x {
			if w := findString(e, fmt.Sprintf("%s[%d]", at, i), bad); w != "" {
				return w
			}
		}
	}
	return ""
}
