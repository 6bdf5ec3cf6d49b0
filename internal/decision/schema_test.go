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
		keeps   bool
		missing []string
	}{
		{"no schema", nil, true, nil},
		{"no status declared", root(nil), false, nil},
		{"status preserves unknown fields", root(new(obj(nil, true))), true, nil},
		{"status without lastDecision", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{"conditions": {}}, false))), false, nil},
		{"lastDecision preserving", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(nil, true)}, false))), true, nil},
		{"lastDecision declared whole", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(full, false)}, false))), true, nil},
		{"lastDecision without reconciler", root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(map[string]apiextensionsv1.JSONSchemaProps{"id": {}, "time": {}, "trigger": {}, "inputs": {}}, false)}, false))), false, []string{"reconciler"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keeps, missing := StatusKeeps(tt.schema)
			if keeps != tt.keeps || !slices.Equal(missing, tt.missing) {
				t.Errorf("StatusKeeps = %v, %v; want %v, %v", keeps, missing, tt.keeps, tt.missing)
			}
		})
	}
	// A CRD with a target: its record names the cluster, which a declared lastDecision must
	// keep; one preserving unknown fields keeps it.
	whole := root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(full, false)}, false)))
	if keeps, missing := StatusKeepsTargeted(whole); keeps || !slices.Equal(missing, []string{targetField}) {
		t.Errorf("StatusKeepsTargeted of a record declared without target = %v, %v; want false, [target]", keeps, missing)
	}
	preserving := root(new(obj(map[string]apiextensionsv1.JSONSchemaProps{StatusField: obj(nil, true)}, false)))
	if keeps, _ := StatusKeepsTargeted(preserving); !keeps {
		t.Error("StatusKeepsTargeted of a lastDecision preserving unknown fields = false, want true")
	}
}

// The schema check knows every key of the record.
func TestRecordFieldsAreTheRecordsKeys(t *testing.T) {
	m := LastDecision{ID: "x", Trigger: "t", Inputs: "i", Reconciler: Reconciler{Side: "s"}, Target: "ns/a[k]"}.Status()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Sorted(slices.Values(append(recordFields(), targetField)))
	if !slices.Equal(keys, want) {
		t.Errorf("the record's keys %v, recordFields %v", keys, want)
	}
}
