package run

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every event of a child ork is pruning is its own delete coming back, until the object is
// gone; a delete that did not happen leaves no mark, and a new object under the same name is
// someone else's news.
func TestPrunedChildEventsAreOrksOwn(t *testing.T) {
	ref := childRef{gr: schema.GroupResource{Resource: "configmaps"}, namespace: "ns", name: "drop"}
	b := newWriteBook()
	b.pruning(ref, "uid-1")
	if !b.own(childEvent{ref: ref, rv: "10", uid: "uid-1"}, false) {
		t.Error("the deletionTimestamp update of a pruned child is not ork's own")
	}
	if b.own(childEvent{ref: ref, rv: "11", uid: "uid-2"}, false) {
		t.Error("an event of another object under the same name counts as ork's own")
	}
	b.forget(childEvent{ref: ref, rv: "12", uid: "uid-1"}, true)
	if b.own(childEvent{ref: ref, rv: "13", uid: "uid-1"}, false) {
		t.Error("the mark outlives the object's delete event")
	}
	b.pruning(ref, "uid-3")
	b.unprune(ref, "uid-3")
	if b.own(childEvent{ref: ref, rv: "14", uid: "uid-3"}, false) {
		t.Error("a delete that did not happen leaves its mark")
	}
}
