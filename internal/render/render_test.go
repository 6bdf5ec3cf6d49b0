package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func cr() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec":     map[string]any{"replicas": int64(2), "logLevel": "info", "debug": true},
	}
}

func TestValueRendersAndCoerces(t *testing.T) {
	in := map[string]any{
		"replicas": "{{ .spec.replicas }}",
		"debug":    "{{ .spec.debug }}",
		"level":    "{{ .spec.logLevel | upper }}",
		"literal":  "8080",
		"number":   int64(3),
		"name":     "{{ .metadata.name }}-svc",
		"fallback": `{{ index .spec "missing" | default "x" }}`,
		"list":     []any{"{{ .spec.replicas }}"},
	}
	got, err := Value("test", in, cr())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"replicas": int64(2), "debug": true, "level": "INFO", "literal": "8080", "number": int64(3),
		"name": "web-svc", "fallback": "x", "list": []any{int64(2)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Value (-want +got):\n%s", d)
	}
}

// A missing field is said in words, with the path read up to the first absent key and how
// to read an optional field; the caller names the template's place.
func TestMissingKeyIsAnErrorInWords(t *testing.T) {
	for _, tt := range []struct{ text, path, hint string }{
		{"{{ .spec.nope }}", ".spec.nope", `{{ index .spec "nope" | default "…" }}`},
		{"{{ .spec.nope.deeper | upper }}", ".spec.nope", `{{ index .spec "nope" | default "…" }}`},
		{"{{ .nope }}", ".nope", `{{ index . "nope" | default "…" }}`},
	} {
		_, err := String("katalog.yaml:12", tt.text, cr())
		var mf *MissingField
		if !errors.As(err, &mf) || mf.Path != tt.path {
			t.Fatalf("%s: err = %v, want a MissingField at %s", tt.text, err, tt.path)
		}
		if msg := err.Error(); !strings.Contains(msg, "template reads "+tt.path+", which the custom resource lacks") || !strings.Contains(msg, tt.hint) {
			t.Errorf("%s: message %q lacks the words or the hint %s", tt.text, msg, tt.hint)
		}
	}
}

func TestParseErrorAndUnknownFunction(t *testing.T) {
	for _, text := range []string{"{{ .spec.x ", "{{ shout .spec.x }}"} {
		if _, err := Parse("k:1", text); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", text)
		}
	}
}

func TestCoerce(t *testing.T) {
	tests := map[string]any{"5": int64(5), "2.5": 2.5, "true": true, "false": false, "null": nil, "abc": "abc", "0x10": "0x10", "": "", "nan": "nan", "Inf": "Inf", "-infinity": "-infinity"}
	for in, want := range tests {
		if got := Coerce(in); got != want {
			t.Errorf("Coerce(%q) = %#v, want %#v", in, got, want)
		}
	}
}

func TestFieldPaths(t *testing.T) {
	got, err := FieldPaths("t", `{{ .spec.logLevel | default "info" }}-{{ if .spec.debug }}{{ .metadata.name }}{{ end }}{{ .spec.logLevel }}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".metadata.name", ".spec.debug", ".spec.logLevel"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("FieldPaths (-want +got):\n%s", d)
	}
}

func TestOptionalRendersMissingKeysAsNull(t *testing.T) {
	tests := []struct {
		text string
		want any
	}{
		{"{{ .spec.missing }}", nil},
		{`{{ .spec.missing | default "info" }}`, "info"},
		{"level-{{ .spec.missing }}", "level-"},
		{"{{ .spec.replicas }}", int64(2)},
	}
	for _, tt := range tests {
		tpl, err := ParseOptional("args", tt.text)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := tpl.Execute(&b, cr()); err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		if got := Optional(b.String()); got != tt.want {
			t.Errorf("%s = %#v, want %#v", tt.text, got, tt.want)
		}
	}
}

func TestNullFieldRendersAsAbsent(t *testing.T) {
	data := map[string]any{"spec": map[string]any{"image": nil}}
	got, err := Value("t", map[string]any{"image": "{{ .spec.image }}"}, data)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.(map[string]any)["image"]; v != nil {
		t.Errorf("a null field rendered as %#v, want nil (never the text <no value>)", v)
	}
	// Inside other text it is nothing, as in remote.args.
	if got, err := Value("t", "web-{{ .spec.image }}", data); err != nil || got != "web-" {
		t.Errorf("a null field inside text rendered as %#v, %v; want \"web-\"", got, err)
	}
}
