package decision

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// StatusKeeps asks statuskeep about status.lastDecision and every key the CRD's passes
// write: the target's and skipUnchanged's only when they write them.
func TestStatusKeepsChecksLastDecision(t *testing.T) {
	declared := func(keys ...string) *apiextensionsv1.JSONSchemaProps {
		rec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
		for _, k := range keys {
			rec.Properties[k] = apiextensionsv1.JSONSchemaProps{}
		}
		status := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{StatusField: rec}}
		return &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"status": status}}
	}
	preserving := declared()
	rec := preserving.Properties["status"].Properties[StatusField]
	rec.XPreserveUnknownFields = new(true)
	preserving.Properties["status"].Properties[StatusField] = rec
	every := append(append(recordFields(), targetField), skipFields()...)
	for _, tt := range []struct {
		name    string
		schema  *apiextensionsv1.JSONSchemaProps
		writes  Writes
		keeps   bool
		missing []string
	}{
		{"id and time only", declared("id", "time"), Writes{}, false, []string{"trigger", "inputs", "reconciler"}},
		{"every key of every record", declared(recordFields()...), Writes{}, true, nil},
		{"a target's record without target", declared(recordFields()...), Writes{Target: true}, false, []string{targetField}},
		{"a target's record with it", declared(append(recordFields(), targetField)...), Writes{Target: true}, true, nil},
		{"skipUnchanged's record without its keys", declared(recordFields()...), Writes{SkipUnchanged: true}, false, skipFields()},
		{"both, every key", declared(every...), Writes{Target: true, SkipUnchanged: true}, true, nil},
		{"preserving unknown fields", preserving, Writes{Target: true, SkipUnchanged: true}, true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			keeps, missing := StatusKeeps(tt.schema, tt.writes)
			if keeps != tt.keeps || !slices.Equal(missing, tt.missing) {
				t.Errorf("StatusKeeps = %v, %v; want %v, %v", keeps, missing, tt.keeps, tt.missing)
			}
		})
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
	want := slices.Sorted(slices.Values(append(append(recordFields(), targetField), skipFields()...)))
	if !slices.Equal(keys, want) {
		t.Errorf("the record's keys %v, recordFields %v", keys, want)
	}
}
