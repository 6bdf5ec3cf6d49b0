package childwrite

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, at int, subresource, fields string) metav1.ManagedFieldsEntry {
	e := metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource}
	if at >= 0 {
		e.Time = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, at, 0, time.UTC)}
	}
	if fields != "" {
		e.FieldsV1 = metav1.NewFieldsV1(fields)
	}
	return e
}

const (
	specFields     = `{"f:spec":{"f:replicas":{}}}`
	revisionFields = `{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}}}`
	labelFields    = `{"f:metadata":{"f:labels":{"f:team":{}}}}`
)

// The cache's summary keeps ork's own entries of the object whole (the field-ownership check
// reads them) and, of every other entry, only a fields-less marker of the latest.
func TestWriters(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    []metav1.ManagedFieldsEntry
	}{
		{"only ork's apply", []metav1.ManagedFieldsEntry{entry(naming.FieldManager, apply, 10, "", specFields)},
			[]metav1.ManagedFieldsEntry{entry(naming.FieldManager, apply, 10, "", specFields)}},
		{"none", nil, nil},
		{"others dropped, the latest marked", []metav1.ManagedFieldsEntry{
			entry("kubectl-edit", update, 12, "", labelFields), entry(naming.FieldManager, apply, 10, "", specFields),
			entry("kube-controller-manager", update, 11, "", revisionFields)},
			[]metav1.ManagedFieldsEntry{entry(naming.FieldManager, apply, 10, "", specFields), entry("kubectl-edit", update, 12, "", "")}},
		{"an entry of unknown time is the latest", []metav1.ManagedFieldsEntry{
			entry("kubectl-edit", update, -1, "", labelFields), entry("kubectl-label", update, 20, "", labelFields)},
			[]metav1.ManagedFieldsEntry{entry("kubectl-edit", update, -1, "", "")}},
		{"ork's subresource entry is not the object's", []metav1.ManagedFieldsEntry{
			entry(naming.FieldManager, update, 10, "status", `{"f:status":{}}`), entry(naming.FieldManager, apply, 10, "", specFields)},
			[]metav1.ManagedFieldsEntry{entry(naming.FieldManager, apply, 10, "", specFields), entry(naming.FieldManager, update, 10, "status", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := writers(tc.entries)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("writers = %+v\nwant %+v", got, tc.want)
			}
			if again := writers(got); !reflect.DeepEqual(again, got) {
				t.Errorf("not idempotent: %+v, then %+v", got, again)
			}
		})
	}
}

// The summary keeps what the hand-over looks for: ork's create entry, until an apply took it
// over.
func TestSummaryKeepsTheCreateEntry(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	created := []metav1.ManagedFieldsEntry{entry(naming.FieldManager, update, 5, "", specFields), entry(naming.FieldManager, apply, 10, "", specFields),
		entry("kubectl-label", update, 12, "", labelFields)}
	if !createdByOrk(writers(created)) || !summarised(writers(created)) {
		t.Errorf("summary %+v: want ork's Update entry kept, another dropped", writers(created))
	}
	if summarised(writers(created[:2])) {
		t.Error("a summary that dropped nothing taken for a partial one: it is the whole list")
	}
	if summarised(created) {
		t.Error("full managedFields taken for a summary")
	}
	if createdByOrk(writers(created[1:2])) {
		t.Error("an applied object taken for a created one")
	}
}

// Handing a child over reads its managedFields and leaves them as they were: the object may
// be the cache's own, which other workers read.
func TestHandOverPatchLeavesTheObjectAlone(t *testing.T) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7", ManagedFields: []metav1.ManagedFieldsEntry{
		entry(naming.FieldManager, metav1.ManagedFieldsOperationUpdate, 1, "", `{"f:data":{"f:b":{}}}`),
		entry(naming.FieldManager, metav1.ManagedFieldsOperationApply, 2, "", `{"f:data":{"f:a":{}}}`)}}}
	before := obj.DeepCopy()
	patch, err := handOverPatch(obj)
	if err != nil || patch == nil {
		t.Fatalf("patch %s, err %v: want a hand-over", patch, err)
	}
	if !reflect.DeepEqual(obj, before) {
		t.Errorf("the object's managedFields changed under the patch:\n%+v\nwant\n%+v", obj.ManagedFields, before.ManagedFields)
	}
}
