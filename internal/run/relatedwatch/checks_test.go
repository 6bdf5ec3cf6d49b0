package relatedwatch

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A burst of changes leaves one check per object waiting, the newest, taken oldest object
// first; an object being read is not handed out again until its read is done, and then
// with the change that came meanwhile.
func TestStatusChecksKeepTheNewestPerObjectAndOneReadAtATime(t *testing.T) {
	q := newStatusChecks()
	check := func(name string, rv int) statusCheck {
		return statusCheck{key: name, new: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: fmt.Sprint(rv)}}}
	}
	take := func(want string, wantRV int) {
		t.Helper()
		ck, ok := q.take()
		if !ok || ck.key != want || ck.new.GetResourceVersion() != fmt.Sprint(wantRV) {
			t.Fatalf("take = %q@%v (%v), want %s@%d", ck.key, ck.new, ok, want, wantRV)
		}
	}
	for rv := range 1000 {
		q.add(check([]string{"a", "b", "c"}[rv%3], rv))
	}
	if len(q.waiting) != 3 || len(q.order) != 3 {
		t.Fatalf("after 1000 changes of 3 objects: %d waiting, %d in order; want 3 and 3", len(q.waiting), len(q.order))
	}
	take("a", 999)
	take("b", 997)
	q.add(check("a", 1000)) // while a is read
	take("c", 998)
	if ck, ok := q.take(); ok {
		t.Fatalf("take = %q while its object is read, want nothing", ck.key)
	}
	q.done("a")
	take("a", 1000)
	q.done("a")
	q.done("b")
	q.done("c")
	if ck, ok := q.take(); ok || len(q.waiting) != 0 || len(q.running) != 0 {
		t.Errorf("take = %q, %d waiting, %d running; want all done", ck.key, len(q.waiting), len(q.running))
	}
}
