package shardring

import (
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/shard"
)

// A bucket just taken is owned at once (the guard passes) but its CRs' passes must wait:
// they read their children from the child caches (prepared.children, the apply's view),
// and each child cache lists the bucket's slots only after its own watch ended and its
// reflector relisted, each on its own back-off. A pass before would send no children for a
// CR that has some, and a reconciler that re-creates what it does not see could make a new
// Secret and overwrite its data (run/childlabel names the same hazard at an unsharded start).
// So a bucket is ready once every child cache has taken in a list made with a holding that
// includes it, since its take, and the take's labelling of unslotted children has ended
// (the children it labels show in the caches only after). Until then its keys wait, noted
// in the ledger, and are queued again the moment it becomes ready.

// State is what begin found for a CR's bucket.
type State int

const (
	// NotOwned: another replica's, being handed back, or its renewal late.
	NotOwned State = iota
	// NotReady: taken here, its child caches or its labelling not caught up yet.
	NotReady
	Ready
)

// waitingKey is a key put back until its bucket is ready.
type waitingKey struct {
	c   Member
	key string
}

// ChildListKey names a child informer's list and watch: the same for the informer's
// client (shardedDynamic, shardedMetadata) and for the engine counting them.
func ChildListKey(full bool, gvr schema.GroupVersionResource, ns string) string {
	kind := "metadata"
	if full {
		kind = "dynamic"
	}
	return kind + "/" + gvr.String() + "/" + ns
}

// childTookList records that the child informer key's reflector has handed its store the
// list made with h at resourceVersion rv (it watches only after), once the store has taken
// it in, and wakes the buckets this made ready. The store takes it in on the informer's own
// goroutine, a moment later: until its resourceVersion reaches rv the list is waited for,
// briefly, unless the holding changes meanwhile (then another list comes) or the run ends.
func (s *Ring) childTookList(key string, h holding, rv string) {
	s.mu.Lock()
	store, stopped := s.childStores[key], s.stopped
	s.mu.Unlock()
	if !storeReached(store, rv) {
		go func() {
			tick := time.NewTicker(storeCatchUpPoll)
			defer tick.Stop()
			for !storeReached(store, rv) {
				select {
				case <-h.changed:
					return
				case <-stopped: // the informers stop with the run: the store stays behind
					return
				case <-tick.C:
				}
			}
			s.childTookList(key, h, rv)
		}()
		return
	}
	s.mu.Lock()
	if s.childSynced == nil {
		s.childSynced = map[string]holding{}
	}
	// A poll of an older holding that ends late never overwrites a newer one's list.
	if prev, ok := s.childSynced[key]; !ok || h.gen >= prev.gen {
		s.childSynced[key] = h
	}
	wake := s.readyNowLocked()
	s.mu.Unlock()
	wakeAll(wake)
}

// storeCatchUpPoll is how often a child store is checked for a list it has been handed:
// it takes it in within the informer's next pop, well under this.
const storeCatchUpPoll = 5 * time.Millisecond

// storeReached reports whether store has taken in what it was handed at resourceVersion rv
// (a list's replace sets its resourceVersion). A store that does not tell (client-go's
// AtomicFIFO gate off), or a resourceVersion that is not a number, counts as reached: the
// list was handed over, which is all that can be known then.
func storeReached(store cache.Store, rv string) bool {
	if store == nil || rv == "" {
		return true
	}
	at := store.LastStoreSyncResourceVersion()
	if at == "" {
		return true
	}
	want, err1 := strconv.ParseUint(rv, 10, 64)
	got, err2 := strconv.ParseUint(at, 10, 64)
	return err1 != nil || err2 != nil || got >= want
}

// labelled records that the take-time labelling of buckets has ended, for the takes counted
// in takes (a later take labels again), and wakes the buckets this made ready.
func (s *Ring) labelled(buckets []int, takes []uint64) {
	s.mu.Lock()
	for i, b := range buckets {
		if s.takes[b] == takes[i] {
			s.work[b].labelled = true
		}
	}
	wake := s.readyNowLocked()
	s.mu.Unlock()
	wakeAll(wake)
}

// readyNowLocked marks ready each taken bucket that became so and returns its waiting keys
// (s.mu held).
func (s *Ring) readyNowLocked() []waitingKey {
	var wake []waitingKey
	for b := range s.work {
		w := &s.work[b]
		if w.ctx == nil || w.ready || !s.caughtUpLocked(b) {
			continue
		}
		w.ready = true
		for k := range w.waiting {
			wake = append(wake, k)
		}
		w.waiting = nil
	}
	return wake
}

// caughtUpLocked reports whether bucket b's labelling ended and every child cache took a
// list of a holding that includes b, made since its take (s.mu held).
func (s *Ring) caughtUpLocked(b int) bool {
	w := &s.work[b]
	if !w.labelled {
		return false
	}
	for key := range s.childStores {
		h, ok := s.childSynced[key]
		if !ok || h.gen < w.sinceGen || !slices.Contains(h.held, b) {
			return false
		}
	}
	return true
}

// WaitReady puts key back until the bucket of uid is ready; false when it is ready by now
// (the caller passes it at once) or no longer taken (its next holder passes it).
func (s *Ring) WaitReady(uid types.UID, c Member, key string) bool {
	b := shard.BucketOf(uid, s.buckets)
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &s.work[b]
	if w.ctx == nil || w.ready {
		return false
	}
	// A set: each event of a waiting key parks it again.
	if w.waiting == nil {
		w.waiting = map[waitingKey]struct{}{}
	}
	w.waiting[waitingKey{c: c, key: key}] = struct{}{}
	return true
}

func wakeAll(keys []waitingKey) {
	for _, k := range keys {
		k.c.Requeue(k.key)
	}
}
