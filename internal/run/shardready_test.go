package run

import (
	"testing"
)

// A bucket just taken is ready only once every child cache has taken in a list of a
// holding that includes it, made since the take, and its labelling has ended: a list of an
// earlier take, or of a holding without it, does not count. Its keys wait until then and
// are queued the moment it is ready.
func TestTakenBucketIsReadyOnlyWhenEveryChildCacheListedIt(t *testing.T) {
	c, s, q, cr := newShardedController(t)
	s.childKeys = []string{"dynamic/a", "metadata/b"}
	const key = "ns/w"

	// An earlier take of bucket 1, listed by both child caches, then handed back.
	s.take(t.Context(), 1)
	s.holdingChanged([]int{1})
	earlier := s.current()
	s.childTookList("dynamic/a", earlier)
	s.childTookList("metadata/b", earlier)
	s.labelled([]int{1}, []uint64{s.takes[1]})
	s.release(1, false)
	s.holdingChanged(nil)
	without := s.current()

	s.take(t.Context(), 1)
	s.holdingChanged([]int{1})
	now := s.current()
	if !s.waitReady(cr.GetUID(), c, key) {
		t.Fatal("a bucket just taken, its child caches still holding the earlier take's lists: ready; want its keys to wait")
	}
	steps := []struct {
		what string
		do   func()
	}{
		// Both caches still show the earlier take's lists, which include the bucket.
		{"the take's labelling ended", func() { s.labelled([]int{1}, []uint64{s.takes[1]}) }},
		{"one child cache listed the new holding", func() { s.childTookList("dynamic/a", now) }},
		{"the other listed the hand-back's holding, without the bucket", func() { s.childTookList("metadata/b", without) }},
	}
	for _, st := range steps {
		st.do()
		if q.Len() != 0 {
			t.Fatalf("after %s: the waiting key was queued; want it to wait for every child cache", st.what)
		}
	}
	s.childTookList("metadata/b", now)
	if q.Len() != 1 {
		t.Fatalf("every child cache listed the take and its labelling ended: %d keys queued; want the waiting one", q.Len())
	}
	if s.waitReady(cr.GetUID(), c, key) {
		t.Fatal("a ready bucket's key was put back to wait")
	}
}
