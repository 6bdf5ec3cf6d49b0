package decision

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// StatusKeeps asks statuskeep about status.lastDecision and every key of the record.
func TestStatusKeepsChecksLastDecision(t *testing.T) {
	declared := func(keys ...string) *apiextensionsv1.JSONSchemaProps {
		rec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
		for _, k := range keys {
			rec.Properties[k] = apiextensionsv1.JSONSchemaProps{}
		}
		status := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{StatusField: rec}}
		return &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"status": status}}
	}
	if keeps, missing := StatusKeeps(declared("id", "time")); keeps || !slices.Equal(missing, []string{"trigger", "inputs", "reconciler"}) {
		t.Errorf("StatusKeeps of a lastDecision with id and time = %v, %v; want false, the other keys missing", keeps, missing)
	}
	if keeps, missing := StatusKeeps(declared(recordFields()...)); !keeps || missing != nil {
		t.Errorf("StatusKeeps of a lastDecision with every key = %v, %v; want true", keeps, missing)
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
