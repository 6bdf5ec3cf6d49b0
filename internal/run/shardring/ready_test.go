package shardring

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/testkit"
)

// A bucket just taken is ready only once every child cache has taken in a list of a
// holding that includes it, made since the take, and its labelling has ended: a list of an
// earlier take, or of a holding without it, does not count. Its keys wait until then and
// are queued the moment it is ready.
func TestTakenBucketIsReadyOnlyWhenEveryChildCacheListedIt(t *testing.T) {
	s, c, uid := newTestRing(t)
	s.childStores = map[string]cache.Store{"dynamic/a": nil, "metadata/b": nil}
	const key = "ns/w"

	// An earlier take of bucket 1, listed by both child caches, then handed back.
	s.Take(t.Context(), 1)
	s.HoldingChanged([]int{1})
	earlier := s.current()
	s.childTookList("dynamic/a", earlier, "")
	s.childTookList("metadata/b", earlier, "")
	s.labelled([]int{1}, []uint64{s.takes[1]})
	s.Release(1, false)
	s.HoldingChanged(nil)
	without := s.current()

	s.Take(t.Context(), 1)
	s.HoldingChanged([]int{1})
	now := s.current()
	if !s.WaitReady(uid, c, key) {
		t.Fatal("a bucket just taken, its child caches still holding the earlier take's lists: ready; want its keys to wait")
	}
	steps := []struct {
		what string
		do   func()
	}{
		// Both caches still show the earlier take's lists, which include the bucket.
		{"the take's labelling ended", func() { s.labelled([]int{1}, []uint64{s.takes[1]}) }},
		{"one child cache listed the new holding", func() { s.childTookList("dynamic/a", now, "") }},
		{"the other listed the hand-back's holding, without the bucket", func() { s.childTookList("metadata/b", without, "") }},
	}
	for _, st := range steps {
		st.do()
		if c.Len() != 0 {
			t.Fatalf("after %s: the waiting key was queued; want it to wait for every child cache", st.what)
		}
	}
	s.childTookList("metadata/b", now, "")
	if c.Len() != 1 {
		t.Fatalf("every child cache listed the take and its labelling ended: %d keys queued; want the waiting one", c.Len())
	}
	if s.WaitReady(uid, c, key) {
		t.Fatal("a ready bucket's key was put back to wait")
	}
}

// A child cache's reflector hands its store the list before it watches, and the store takes
// it in a moment later, on the informer's goroutine: the bucket is ready only once the store
// has reached the list's resourceVersion.
func TestTakenBucketWaitsForTheChildStoreToTakeItsList(t *testing.T) {
	s, c, uid := newTestRing(t)
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Replace(nil, "5"); err != nil {
		t.Fatal(err)
	}
	if store.LastStoreSyncResourceVersion() != "5" {
		t.Skip("client-go's AtomicFIFO gate is off: the store does not tell its resourceVersion")
	}
	s.childStores = map[string]cache.Store{"dynamic/a": store}
	s.Take(t.Context(), 1)
	s.HoldingChanged([]int{1})
	s.labelled([]int{1}, []uint64{s.takes[1]})
	if !s.WaitReady(uid, c, "ns/w") {
		t.Fatal("ready before any child list")
	}
	s.childTookList("dynamic/a", s.current(), "7") // handed over, not yet taken in
	if c.Len() != 0 {
		t.Fatal("the key was queued while the child store was still at resourceVersion 5, its list at 7")
	}
	if err := store.Replace(nil, "7"); err != nil {
		t.Fatal(err)
	}
	// The store is checked every storeCatchUpPoll (5 ms); 10 s covers a loaded machine.
	testkit.Eventually(t, "the waiting key queued once the store took the list in", time.Millisecond, 10*time.Second,
		func(context.Context) (bool, error) {
			if c.Len() != 1 {
				return false, fmt.Errorf("%d keys queued", c.Len())
			}
			return true, nil
		})
}
