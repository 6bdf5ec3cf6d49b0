package run

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, at int, subresource, fields string) metav1.ManagedFieldsEntry {
	e := metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource}
	if at >= 0 {
		e.Time = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, at, 0, time.UTC)}
	}
	if fields != "" {
		e.FieldsV1 = &metav1.FieldsV1{Raw: []byte(fields)}
	}
	return e
}

const (
	specFields     = `{"f:spec":{"f:replicas":{}}}`
	revisionFields = `{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}}}`
	labelFields    = `{"f:metadata":{"f:labels":{"f:team":{}}}}`
)

// untouched says whether ork's last write is the object's latest, from full managedFields
// and from the cache's summary of them alike.
func TestUntouched(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"only ork's apply", []metav1.ManagedFieldsEntry{entry(FieldManager, apply, 10, "", specFields)}, true},
		{"only ork's create", []metav1.ManagedFieldsEntry{entry(FieldManager, update, 10, "", specFields)}, true},
		{"no ork entry", []metav1.ManagedFieldsEntry{entry("kubectl-edit", update, 10, "", specFields)}, false},
		{"none", nil, false},
		{"another writer before ork", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kubectl-edit", update, 5, "", specFields)}, true},
		{"another writer after ork", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kubectl-edit", update, 11, "", specFields)}, false},
		{"another writer in ork's second", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kubectl-edit", update, 10, "", specFields)}, false},
		{"another writer after ork's create, before its apply", []metav1.ManagedFieldsEntry{
			entry(FieldManager, update, 5, "", specFields), entry("kubectl-edit", update, 7, "", labelFields),
			entry(FieldManager, apply, 10, "", specFields)}, true},
		{"a status write after ork", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kube-controller-manager", update, 20, "status", `{"f:status":{}}`)}, true},
		{"a server annotation after ork", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kube-controller-manager", update, 20, "", revisionFields)}, true},
		{"a label after ork", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kubectl-label", update, 20, "", labelFields)}, false},
		{"another writer of unknown time", []metav1.ManagedFieldsEntry{
			entry(FieldManager, apply, 10, "", specFields), entry("kubectl-edit", update, -1, "", specFields)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := untouched(tc.entries); got != tc.want {
				t.Errorf("untouched(full) = %v, want %v", got, tc.want)
			}
			if got := untouched(writers(tc.entries)); got != tc.want {
				t.Errorf("untouched(summary %+v) = %v, want %v", writers(tc.entries), got, tc.want)
			}
			for _, e := range writers(tc.entries) {
				if e.FieldsV1 != nil {
					t.Errorf("the summary keeps fields: %+v", e)
				}
			}
		})
	}
}

// The summary keeps what the hand-over looks for: ork's create entry, until an apply took it
// over.
func TestSummaryKeepsTheCreateEntry(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	created := []metav1.ManagedFieldsEntry{entry(FieldManager, update, 5, "", specFields), entry(FieldManager, apply, 10, "", specFields)}
	if !createdByOrk(writers(created)) || !summarised(writers(created)) {
		t.Errorf("summary %+v: want ork's Update entry kept, fields dropped", writers(created))
	}
	if summarised(created) {
		t.Error("full managedFields taken for a summary")
	}
	if createdByOrk(writers(created[1:])) {
		t.Error("an applied object taken for a created one")
	}
}
