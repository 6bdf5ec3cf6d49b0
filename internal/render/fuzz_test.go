package render

import "testing"

// FuzzTemplates renders arbitrary templates against a custom resource: parsing and rendering
// fail with an error, never a panic, and a value template's result is a JSON value.
//
//	go test ./internal/render -run '^$' -fuzz FuzzTemplates -fuzztime 5m
func FuzzTemplates(f *testing.F) {
	for _, s := range []string{
		`{{ .metadata.name }}`, `{{ .spec.replicas | default 3 }}`, `{{ index .spec "log-level" | upper }}`,
		`{{ toJSON .spec }}`, `{{ .spec.x | b64enc | b64dec }}`, `{{ required "x" .spec.missing }}`,
		`{{ trunc 3 .metadata.name }}`, `{{ replace "a" "b" .metadata.name | quote }}`, `{{`, `}}{{ end }}`,
	} {
		f.Add(s)
	}
	cr := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(2), "log-level": "info", "x": "abc", "list": []any{"a", int64(1)}},
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = String("fuzz", text, cr)
		if _, err := Value("fuzz", text, cr); err == nil {
			_, _ = Value("fuzz", map[string]any{"k": text, "l": []any{text}}, cr)
		}
	})
}
