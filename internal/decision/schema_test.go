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
	// A CRD with a target: its record names the cluster, which a declared lastDecision must
	// keep; one preserving unknown fields keeps it.
	if keeps, missing := StatusKeepsTargeted(declared(recordFields()...)); keeps || !slices.Equal(missing, []string{targetField}) {
		t.Errorf("StatusKeepsTargeted of a record declared without target = %v, %v; want false, [target]", keeps, missing)
	}
	if keeps, missing := StatusKeepsTargeted(declared(append(recordFields(), targetField)...)); !keeps || missing != nil {
		t.Errorf("StatusKeepsTargeted of a record declared with target = %v, %v; want true", keeps, missing)
	}
	preserving := declared()
	rec := preserving.Properties["status"].Properties[StatusField]
	rec.XPreserveUnknownFields = new(true)
	preserving.Properties["status"].Properties[StatusField] = rec
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
