package childwrite

import (
	"testing"

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
