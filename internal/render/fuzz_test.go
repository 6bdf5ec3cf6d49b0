package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzTemplates renders arbitrary templates through a Cache, the path the declarative
// reconciler runs on every pass, against a custom resource with a null field:
//
//   - never a panic; the cached template renders exactly as one parsed afresh, on every call;
//
//   - an error names the template (text/template's errors carry the name; a MissingField
//     carries the path read, and its caller adds the place: FuzzDesired in
//     internal/declarative checks the whole message);
//
//   - Value over an object renders all of it or returns an error and no value, never a
//     partial object; a rendered value is JSON, the same template renders alike in every
//     place, and no string in it holds "<no value>" unless the template wrote it.
//
//     go test ./internal/render -run '^$' -fuzz FuzzTemplates -fuzztime 5m
func FuzzTemplates(f *testing.F) {
	for _, s := range []string{
		`{{ .metadata.name }}`, `{{ .spec.replicas | default 3 }}`, `{{ index .spec "log-level" | upper }}`,
		`{{ toJSON .spec }}`, `{{ .spec.x | b64enc | b64dec }}`, `{{ required "x" .spec.missing }}`,
		`{{ trunc 3 .metadata.name }}`, `{{ replace "a" "b" .metadata.name | quote }}`, `{{`, `}}{{ end }}`,
		`web-{{ .spec.nothing }}`, `{{ .spec.nothing }}`, `{{ .spec.missing }}`, `<no value>{{ .spec.nothing }}`,
	} {
		f.Add(s)
	}
	cr := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"replicas": int64(2), "log-level": "info", "x": "abc", "list": []any{"a", int64(1)},
			"nothing": nil},
	}
	const name = "katalog.yaml:7"
	f.Fuzz(func(t *testing.T, text string) {
		var c Cache
		got, err := c.String(name, text, cr)
		for _, again := range []func() (string, error){
			func() (string, error) { return c.String(name, text, cr) },
			func() (string, error) { return String(name, text, cr) },
		} {
			if s, e := again(); s != got || errText(e) != errText(err) {
				t.Fatalf("%q renders %q, %v once and %q, %v again", text, got, err, s, e)
			}
		}
		var mf *MissingField
		if err != nil && !strings.Contains(err.Error(), name) && !errors.As(err, &mf) {
			t.Fatalf("%q: error %q does not name the template %s", text, err, name)
		}
		v, err := c.Value(name, map[string]any{"k": text, "l": []any{text, "x"}}, cr)
		if err != nil {
			if v != nil {
				t.Fatalf("%q: Value returned %#v with error %v, want no value", text, v, err)
			}
			return
		}
		m := v.(map[string]any)
		l := m["l"].([]any)
		if len(m) != 2 || len(l) != 2 || !cmp.Equal(l[0], m["k"]) || l[1] != "x" {
			t.Fatalf("%q: Value = %#v, want the same value in both places", text, v)
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("%q: Value = %#v is no JSON: %v", text, v, err)
		}
		if s, ok := m["k"].(string); ok && strings.Contains(s, noValue) && !strings.Contains(text, noValue) {
			t.Fatalf("%q renders %q: a null field as the text %s", text, s, noValue)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
