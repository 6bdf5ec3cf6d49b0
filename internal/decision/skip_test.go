package decision

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string, at time.Time) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", Subresource: subresource,
		Time: &metav1.Time{Time: at}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const (
	cmFields      = `{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`
	cmFieldsOrder = `{"f:metadata":{"f:labels":{"f:app":{}}},"f:data":{"f:b":{},"f:a":{}}}`
	cmFieldsLess  = `{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`
)

func TestOwnedFieldsDigest(t *testing.T) {
	t1, t2 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	mine := []metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationApply, "", cmFields, t1)}
	base := OwnedFieldsDigest(mine)
	if base == "" {
		t.Fatal("ork's own Apply entry digests to nothing")
	}
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		same    bool
	}{
		{"another time: times are never trusted", []metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationApply, "", cmFields, t2)}, true},
		{"the same fields in another key order", []metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationApply, "", cmFieldsOrder, t1)}, true},
		{"another manager's entry beside", append([]metav1.ManagedFieldsEntry{entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{"f:c":{}}}`, t2)}, mine...), true},
		{"ork's status entry beside", append([]metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`, t2)}, mine...), true},
		{"a field taken from ork", []metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationApply, "", cmFieldsLess, t1)}, false},
		{"the create's Update entry, not an apply", []metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationUpdate, "", cmFields, t1)}, false},
		{"another manager holding the same fields", []metav1.ManagedFieldsEntry{entry("other", metav1.ManagedFieldsOperationApply, "", cmFields, t1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OwnedFieldsDigest(tt.entries); (got == base) != tt.same {
				t.Errorf("digest %q against %q: same %v, want %v", got, base, got == base, tt.same)
			}
		})
	}
	if got := OwnedFieldsDigest([]metav1.ManagedFieldsEntry{entry("other", metav1.ManagedFieldsOperationApply, "", cmFields, t1)}); got != "" {
		t.Errorf("no entry of ork's digests to %q, want empty", got)
	}
}

func TestChildrenDigest(t *testing.T) {
	deploy := ChildState{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "web", Applied: "a1", Owned: "o1"}
	cm := ChildState{Resource: "configmaps", Namespace: "ns", Name: "web-cfg", Applied: "a2", Owned: "o2"}
	base := ChildrenDigest("c1", []ChildState{deploy, cm})
	with := func(s ChildState, f func(*ChildState)) ChildState { f(&s); return s }
	tests := []struct {
		name   string
		states []ChildState
		same   bool
	}{
		{"another order", []ChildState{cm, deploy}, true},
		{"a child missing", []ChildState{deploy}, false},
		{"a child extra", []ChildState{deploy, cm, with(cm, func(s *ChildState) { s.Name = "extra" })}, false},
		{"another intent applied", []ChildState{with(deploy, func(s *ChildState) { s.Applied = "a9" }), cm}, false},
		{"a field taken from ork", []ChildState{with(deploy, func(s *ChildState) { s.Owned = "o9" }), cm}, false},
		{"a child being deleted", []ChildState{with(deploy, func(s *ChildState) { s.Deleting = true }), cm}, false},
		{"the same name in another namespace", []ChildState{with(deploy, func(s *ChildState) { s.Namespace = "other" }), cm}, false},
		{"a version, kept for the children payload", []ChildState{with(deploy, func(s *ChildState) { s.ResourceVersion = "7" }), cm}, false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ChildrenDigest("c1", tt.states); (got == base) != tt.same {
				t.Errorf("same %v, want %v", got == base, tt.same)
			}
		})
	}
	// Fields run together must not digest alike: "ab"+"c" is not "a"+"bc".
	if ChildrenDigest("c1", []ChildState{{Name: "ab", Applied: "c"}}) == ChildrenDigest("c1", []ChildState{{Name: "a", Applied: "bc"}}) {
		t.Error("the digest does not separate its fields")
	}
	if ChildrenDigest("c2", []ChildState{deploy, cm}) == base {
		t.Error("another reconcile configuration digests alike")
	}
}

func TestUnchanged(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rec := LastDecision{ID: "d1", Time: now.Add(-time.Hour), Inputs: "sha256:in", Children: "sha256:ch"}
	with := func(f func(*LastDecision)) LastDecision { d := rec; f(&d); return d }
	tests := []struct {
		name     string
		rec      LastDecision
		inputs   string
		children string
		maxAge   time.Duration
		why      string // "": skipped
		looked   bool   // the children were looked at
	}{
		{"everything as recorded", rec, "sha256:in", "sha256:ch", 24 * time.Hour, "", true},
		{"a record from before skipUnchanged", with(func(d *LastDecision) { d.Children = "" }), "sha256:in", "sha256:ch", 24 * time.Hour, NotRecorded, false},
		{"the spec changed", rec, "sha256:other", "sha256:ch", 24 * time.Hour, InputsChanged, false},
		{"older than maxAge", rec, "sha256:in", "sha256:ch", time.Hour, DecisionTooOld, false},
		{"a child drifted", rec, "sha256:in", "sha256:drifted", 24 * time.Hour, ChildrenChanged, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			looked := false
			ok, why := tt.rec.Unchanged(tt.inputs, func(recorded string) bool { looked = true; return recorded == tt.children }, now, tt.maxAge)
			if ok != (tt.why == "") || why != tt.why {
				t.Errorf("Unchanged = %v, %q; want %v, %q", ok, why, tt.why == "", tt.why)
			}
			if looked != tt.looked {
				t.Errorf("children looked at: %v, want %v", looked, tt.looked)
			}
		})
	}
}

// A check of the children matches the record of the same children however each was read:
// by their bytes when both were read alike (a typed object keeps the server's), else by the
// canonical form; and no read of other fields matches. A record of the same children read
// otherwise is not stale for that alone.
func TestChildrenMatch(t *testing.T) {
	t1 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	typed := func(fields string) metav1.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-cfg",
			Annotations:   map[string]string{naming.AppliedAnnotation: "a1"},
			ManagedFields: []metav1.ManagedFieldsEntry{entry(naming.FieldManager, metav1.ManagedFieldsOperationApply, "", fields, t1)}}}
	}
	decoded := func(fields string) metav1.Object {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		o := typed(fields)
		u.SetNamespace(o.GetNamespace())
		u.SetName(o.GetName())
		u.SetAnnotations(o.GetAnnotations())
		u.SetManagedFields(o.GetManagedFields()) // through maps: keys sorted
		return u
	}
	state := func(o metav1.Object) []ChildState { return []ChildState{StateOf("", "configmaps", o, false)} }
	tests := []struct {
		name          string
		recorded, now metav1.Object
		match         bool
	}{
		{"read alike", typed(cmFields), typed(cmFields), true},
		{"read alike, keys in another order", typed(cmFieldsOrder), typed(cmFieldsOrder), true},
		{"recorded from a decoded answer", decoded(cmFieldsOrder), typed(cmFieldsOrder), true},
		{"checked on a decoded cache", typed(cmFieldsOrder), decoded(cmFieldsOrder), true},
		{"a field taken from ork", typed(cmFields), typed(cmFieldsLess), false},
		{"a field taken, recorded decoded", decoded(cmFields), typed(cmFieldsLess), false},
	}
	// Read alike, the bytes decide: the canonical digest is not even looked at.
	_, asRead, _ := strings.Cut(ChildrenDigest("c1", state(typed(cmFields))), " ")
	if !ChildrenMatch("c1", state(typed(cmFields)), "sha256:not-looked-at "+asRead) {
		t.Error("children read alike are decoded although their bytes match the record's")
	}
	for _, tt := range tests {
		recorded := ChildrenDigest("c1", state(tt.recorded))
		if got := ChildrenMatch("c1", state(tt.now), recorded); got != tt.match {
			t.Errorf("%s: match %v, want %v", tt.name, got, tt.match)
		}
		if tt.match {
			if ChildrenMatch("c2", state(tt.now), recorded) {
				t.Errorf("%s: matches under another configuration", tt.name)
			}
			// A record from before the digest as read: the canonical one alone.
			if canonical, _, _ := strings.Cut(recorded, " "); !ChildrenMatch("c1", state(tt.now), canonical) {
				t.Errorf("%s: the canonical digest alone does not match", tt.name)
			}
			next := LastDecision{Inputs: "sha256:in", Children: ChildrenDigest("c1", state(tt.now))}
			if (LastDecision{Inputs: "sha256:in", Children: recorded, Time: t1}).Stale(next, t1, time.Hour) {
				t.Errorf("%s: the record is stale for the same children read otherwise", tt.name)
			}
		}
	}
}

func TestStale(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	on := LastDecision{ID: "d1", Time: now.Add(-time.Hour), Inputs: "sha256:in", Children: "sha256:ch"}
	next := LastDecision{ID: "d2", Time: now, Inputs: "sha256:in", Children: "sha256:ch"}
	with := func(d LastDecision, f func(*LastDecision)) LastDecision { f(&d); return d }
	tests := []struct {
		name      string
		on, next  LastDecision
		maxAge    time.Duration
		wantStale bool
	}{
		{"the same: nothing to write", on, next, 24 * time.Hour, false},
		{"other inputs, the same answer", on, with(next, func(d *LastDecision) { d.Inputs = "sha256:x" }), 24 * time.Hour, true},
		{"children repaired by another pass", on, with(next, func(d *LastDecision) { d.Children = "sha256:x" }), 24 * time.Hour, true},
		{"a longer requeue delay alone (its presence is in the children digest)", with(on, func(d *LastDecision) { d.RequeueAfter = "30s" }), with(next, func(d *LastDecision) { d.RequeueAfter = "45s" }), 24 * time.Hour, false},
		{"a shorter requeue delay (a skip would requeue late)", with(on, func(d *LastDecision) { d.RequeueAfter = "1h" }), with(next, func(d *LastDecision) { d.RequeueAfter = "10s" }), 24 * time.Hour, true},
		{"a record from before skipUnchanged", with(on, func(d *LastDecision) { d.Children = "" }), next, 24 * time.Hour, true},
		{"half maxAge old", on, next, 2 * time.Hour, true},
		{"half maxAge old, nothing to record", with(on, func(d *LastDecision) { d.Children = "" }), with(next, func(d *LastDecision) { d.Children = "" }), 2 * time.Hour, false},
		{"an answer not applied whole withdraws a trusted record", on, with(next, func(d *LastDecision) { d.Children = "" }), 24 * time.Hour, true},
		{"nothing to record over other inputs without children", with(on, func(d *LastDecision) { d.Children = "" }), with(next, func(d *LastDecision) { d.Children, d.Inputs = "", "sha256:x" }), 24 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.on.Stale(tt.next, now, tt.maxAge); got != tt.wantStale {
				t.Errorf("Stale = %v, want %v", got, tt.wantStale)
			}
		})
	}
}
