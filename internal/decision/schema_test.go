package decision

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestStatusKeeps(t *testing.T) {
	yes := true
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps, preserve bool) apiextensionsv1.JSONSchemaProps {
		s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
		if preserve {
			s.XPreserveUnknownFields = &yes
		}
		return s
	}
	root := func(status *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		r := obj(map[string]apiextensionsv1.JSONSchemaProps{}, false)
		if status != nil {
			r.Properties["status"] = *status
		}
		return &r
	}
	full := map[string]apiextensionsv1.JSONSchemaProps{"id": {}, "time": {}, "trigger": {}, "inputs": {}, "reconciler": {}}
	tests := []struct {
		name    string
		schema  *apiextensionsv1.JSONSchemaProps
		skip    bool
		keeps   bool
		missing []string
	}{
		{"no schema", nil, false, true, nil},
		{"no status declared", root(nil), false, false, nil},
		{"status preserves unknown fields", root(new(obj(nil, true))), false, true, nil},
		{"status without lastDecision", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{"conditions": {}}, false))), false, false, nil},
		{"lastDecision preserving", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(nil, true)}, false))), false, true, nil},
		{"lastDecision declared whole", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(full, false)}, false))), false, true, nil},
		{"declared whole without skipUnchanged's keys, with it", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(full, false)}, false))), true, false, []string{"children", "requeueAfter"}},
		{"lastDecision without reconciler", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(map[string]apiextensionsv1.JSONSchemaProps{"id": {}, "time": {}, "trigger": {}, "inputs": {}}, false)}, false))), false, false, []string{"reconciler"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keeps, missing := StatusKeeps(tt.schema, tt.skip)
			if keeps != tt.keeps || !slices.Equal(missing, tt.missing) {
				t.Errorf("StatusKeeps = %v, %v; want %v, %v", keeps, missing, tt.keeps, tt.missing)
			}
		})
	}
}

// The schema check knows every key of the record.
func TestRecordFieldsAreTheRecordsKeys(t *testing.T) {
	m := LastDecision{ID: "x", Trigger: "t", Inputs: "i", Reconciler: Reconciler{Side: "s"}}.Status()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Sorted(slices.Values(recordFields()))
	if !slices.Equal(keys, want) {
		t.Errorf("the record's keys %v, recordFields %v", keys, want)
	}
}
