package katalogschema

import (
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/orkspace/ork/schema"
)

func TestCheckReadsYAMLAsAnEditorDoes(t *testing.T) {
	v, err := NewValidator(schema.Katalog())
	if err != nil {
		t.Fatal(err)
	}
	const head = "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    web:\n      apiTypes: {group: myorg.io, version: v1, kind: Web, plural: webs}\n"
	for _, tc := range []struct {
		name, yaml string
		// want is "" for valid, "schema" for a schema verdict, else text of another error
		want string
	}{
		{"a valid Katalog", head, ""},
		{"a trailing document separator", head + "---\n", ""},
		{"null is absent", head + "      namespaced: ~\n", ""},
		{"YAML 1.2: yes is a string, not a boolean", head + "      namespaced: yes\n", "schema"},
		{"every document is checked", head + "---\n" + "kind: Nope\n", "schema"},
		{"no document at all is null", "# nothing\n", "schema"},
		{"an unquoted template has no JSON form", head + "      crdFile: {{ .x }}\n", "no JSON form"},
		{"a syntax error", head + "  : :\n", "YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Check([]byte(tc.yaml))
			var ve *jsonschema.ValidationError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("want valid, got %v", err)
			case tc.want == "schema" && !errors.As(err, &ve):
				t.Errorf("want a schema verdict, got %v", err)
			case tc.want != "" && tc.want != "schema" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("want an error with %q, got %v", tc.want, err)
			}
		})
	}
}
