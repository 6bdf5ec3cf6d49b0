package childwrite

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every event of a child ork is pruning is its own delete coming back, until the object is
// gone; a delete that did not happen leaves no mark, and a new object under the same name is
// someone else's news.
func TestPrunedChildEventsAreOrksOwn(t *testing.T) {
	ref := Ref{gr: schema.GroupResource{Resource: "configmaps"}, namespace: "ns", name: "drop"}
	b := NewBook()
	b.Pruning(ref, "uid-1")
	if !b.Own(Event{Ref: ref, RV: "10", UID: "uid-1"}, false) {
		t.Error("the deletionTimestamp update of a pruned child is not ork's own")
	}
	if b.Own(Event{Ref: ref, RV: "11", UID: "uid-2"}, false) {
		t.Error("an event of another object under the same name counts as ork's own")
	}
	b.Forget(Event{Ref: ref, RV: "12", UID: "uid-1"}, true)
	if b.Own(Event{Ref: ref, RV: "13", UID: "uid-1"}, false) {
		t.Error("the mark outlives the object's delete event")
	}
	b.Pruning(ref, "uid-3")
	b.unprune(ref, "uid-3")
	if b.Own(Event{Ref: ref, RV: "14", UID: "uid-3"}, false) {
		t.Error("a delete that did not happen leaves its mark")
	}
}

// The owner index follows every write: a child moves between owners, is written again by
// the same one without a duplicate, and goes with its drop.
func TestBookOwnerIndex(t *testing.T) {
	b := NewBook()
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	a, c, d := Ref{gr: gr, namespace: "ns", name: "a"}, Ref{gr: gr, namespace: "ns", name: "c"}, Ref{gr: gr, namespace: "ns", name: "d"}
	after := &metav1.ObjectMeta{ResourceVersion: "1"}
	for _, ref := range []Ref{a, c, d, a} {
		b.Wrote(ref, [32]byte{1}, "one", nil, after)
	}
	sorted := func(refs []Ref) []string {
		var names []string
		for _, r := range refs {
			names = append(names, r.name)
		}
		slices.Sort(names)
		return names
	}
	if got := sorted(b.writtenFor("one")); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("writtenFor(one) = %v, want a, c, d once each", got)
	}
	b.Wrote(a, [32]byte{1}, "two", nil, after)
	if got := sorted(b.writtenFor("one")); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("after a moved to two: writtenFor(one) = %v, want c, d", got)
	}
	if got := sorted(b.writtenFor("two")); !slices.Equal(got, []string{"a"}) {
		t.Errorf("writtenFor(two) = %v, want a", got)
	}
	b.prunedDone(c)
	b.Forget(Event{Ref: d, RV: "2"}, true)
	if got := b.writtenFor("one"); len(got) != 0 {
		t.Errorf("after c and d went: writtenFor(one) = %v, want none", sorted(got))
	}
	if _, left := b.byOwner["one"]; left {
		t.Error("an owner with no write left keeps its index entry")
	}
	b.Wrote(a, [32]byte{1}, "one", nil, after) // back to its first owner
	if got := sorted(b.writtenFor("one")); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after a moved back: writtenFor(one) = %v, want a", got)
	}
	if got := b.writtenFor("two"); len(got) != 0 {
		t.Errorf("after a moved back: writtenFor(two) = %v, want none", sorted(got))
	}
	b.Wrote(c, [32]byte{1}, "", nil, after) // no owner: never indexed under ""
	if _, indexed := b.byOwner[""]; indexed {
		t.Error("a write without an owner is indexed under the empty uid")
	}
	b.prunedDone(a)
	b.prunedDone(c)
	if len(b.byOwner) != 0 || len(b.writes) != 0 {
		t.Errorf("an empty book holds %d owners and %d writes", len(b.byOwner), len(b.writes))
	}
}
