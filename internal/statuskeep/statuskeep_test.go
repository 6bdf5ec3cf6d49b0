package statuskeep

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestWhole(t *testing.T) {
	yes := true
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps, preserve bool) apiextensionsv1.JSONSchemaProps {
		s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
		if preserve {
			s.XPreserveUnknownFields = &yes
		}
		return s
	}
	root := func(status *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		r := obj(map[string]apiextensionsv1.JSONSchemaProps{"spec": obj(nil, true)}, false)
		if status != nil {
			r.Properties["status"] = *status
		}
		return &r
	}
	statusWith := func(field apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		return new(obj(map[string]apiextensionsv1.JSONSchemaProps{"phase": {Type: "string"}, "record": field}, false))
	}
	keys := []string{"id", "time", "trigger"}
	tests := []struct {
		name    string
		schema  *apiextensionsv1.JSONSchemaProps
		keeps   bool
		missing []string
	}{
		{"no schema", nil, true, nil},
		{"no status declared", root(nil), false, nil},
		{"no status, the root preserves unknown fields", new(obj(nil, true)), true, nil},
		{"status preserves unknown fields", root(new(obj(nil, true))), true, nil},
		{"status without the field", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{"phase": {Type: "string"}}, false))), false, nil},
		{"the field preserves unknown fields", root(statusWith(obj(nil, true))), true, nil},
		{"the field declares every key", root(statusWith(obj(map[string]apiextensionsv1.JSONSchemaProps{"id": {}, "time": {}, "trigger": {}}, false))), true, nil},
		{"the field declares some keys", root(statusWith(obj(map[string]apiextensionsv1.JSONSchemaProps{"time": {}}, false))), false, []string{"id", "trigger"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keeps, missing := Whole(tt.schema, "record", keys)
			if keeps != tt.keeps || !slices.Equal(missing, tt.missing) {
				t.Errorf("Whole = %v, %v; want %v, %v", keeps, missing, tt.keeps, tt.missing)
			}
		})
	}
}
