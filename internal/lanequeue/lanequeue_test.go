package lanequeue

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

// namespaceOf groups "ns/name" keys by ns, and cluster-scoped "name" keys together.
func namespaceOf(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}

// newWorkQueue is the work queue the engine builds: client-go's, over a lane queue.
func newWorkQueue(t *testing.T, opts Options[string]) (*workqueue.Typed[string], *Queue[string]) {
	t.Helper()
	if opts.Group == nil {
		opts.Group = namespaceOf
	}
	lanes := New(opts)
	wq := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Queue: lanes})
	t.Cleanup(wq.ShutDown)
	return wq, lanes
}

// take gets a ready key without blocking: the test fails when there is none.
func take(t *testing.T, wq *workqueue.Typed[string]) string {
	t.Helper()
	if wq.Len() == 0 {
		t.Fatal("no key ready")
	}
	k, shutdown := wq.Get()
	if shutdown {
		t.Fatal("queue shut down")
	}
	return k
}

func addFast(wq *workqueue.Typed[string], lanes *Queue[string], key string) {
	lanes.Fast(key)
	wq.Add(key)
}

func TestSlowLaneIsNotStarvedByASteadyFastStream(t *testing.T) {
	for _, workers := range []int{1, 2, 7, 16} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			wq, lanes := newWorkQueue(t, Options[string]{})
			for i := range 200 {
				wq.Add(fmt.Sprintf("ns/slow-%d", i))
			}
			next := 0
			fastKey := func() string { next++; return fmt.Sprintf("ns/fast-%d", next) }
			// Keep the fast lane full: more fast keys than workers, a new one for each taken.
			for range workers + 8 {
				addFast(wq, lanes, fastKey())
			}
			var lanesTaken []Lane
			inFlight := []string{}
			for range 400 {
				// Every worker busy: one finishes, then one takes.
				if len(inFlight) == workers {
					wq.Done(inFlight[0])
					inFlight = inFlight[1:]
				}
				k := take(t, wq)
				l := lanes.Taken(k)
				if strings.Contains(k, "fast") != (l == Fast) {
					t.Fatalf("%s taken from the %s lane", k, l)
				}
				lanesTaken = append(lanesTaken, l)
				inFlight = append(inFlight, k)
				if l == Fast {
					addFast(wq, lanes, fastKey())
				}
			}
			// The slow lane had keys throughout (200 > 400/8): every window of 8 takes holds one.
			for i := 0; i+8 <= len(lanesTaken); i++ {
				slow := 0
				for _, l := range lanesTaken[i : i+8] {
					if l == Slow {
						slow++
					}
				}
				if slow == 0 {
					t.Fatalf("takes %d..%d are all fast", i, i+7)
				}
			}
		})
	}
}

func TestFastLaneGoesFirstOtherwise(t *testing.T) {
	wq, lanes := newWorkQueue(t, Options[string]{})
	wq.Add("ns/slow")
	addFast(wq, lanes, "ns/fast")
	if k := take(t, wq); k != "ns/fast" {
		t.Fatalf("first take = %s, want ns/fast", k)
	}
	if k := take(t, wq); k != "ns/slow" {
		t.Fatalf("second take = %s, want ns/slow", k)
	}
}

func TestNamespacesTakeTurnsWhateverTheirBacklog(t *testing.T) {
	for _, lane := range []Lane{Slow, Fast} {
		t.Run(lane.String(), func(t *testing.T) {
			wq, lanes := newWorkQueue(t, Options[string]{})
			add := func(k string) {
				if lane == Fast {
					lanes.Fast(k)
				}
				wq.Add(k)
			}
			for i := range 5000 {
				add(fmt.Sprintf("big/cr-%d", i))
			}
			add("small/only")
			add("cluster-scoped")
			// Three groups with keys: each is taken within its first round of three.
			got := map[string]bool{}
			for range 3 {
				k := take(t, wq)
				got[namespaceOf(k)] = true
				wq.Done(k)
			}
			for _, ns := range []string{"big", "small", ""} {
				if !got[ns] {
					t.Errorf("namespace %q was not taken in the first round: %v", ns, got)
				}
			}
		})
	}
}

func TestFiveKeysOfASmallNamespaceAreTakenWithinTenTakes(t *testing.T) {
	wq, _ := newWorkQueue(t, Options[string]{})
	for i := range 500 {
		wq.Add(fmt.Sprintf("big/cr-%d", i))
	}
	for range 100 { // the big namespace's start-up is under way
		wq.Done(take(t, wq))
	}
	for i := range 5 {
		wq.Add(fmt.Sprintf("small/cr-%d", i))
	}
	small := 0
	for range 10 {
		k := take(t, wq)
		if namespaceOf(k) == "small" {
			small++
		}
		wq.Done(k)
		if small == 5 {
			return
		}
	}
	t.Fatalf("%d of 5 small keys taken in 10 takes", small)
}

func TestAFastCauseMovesAWaitingKeyToTheFastLane(t *testing.T) {
	wq, lanes := newWorkQueue(t, Options[string]{})
	for i := range 10 {
		wq.Add(fmt.Sprintf("ns/cr-%d", i))
	}
	addFast(wq, lanes, "ns/cr-7")
	if n := wq.Len(); n != 10 {
		t.Fatalf("Len = %d after promotion, want 10: a key is never in both lanes", n)
	}
	if d := lanes.Depth(Fast); d != 1 {
		t.Fatalf("fast depth = %d, want 1", d)
	}
	if k := take(t, wq); k != "ns/cr-7" {
		t.Fatalf("first take = %s, want the promoted ns/cr-7", k)
	}
	if l := lanes.Taken("ns/cr-7"); l != Fast {
		t.Fatalf("lane = %s, want fast", l)
	}
	// A slow add of a key already fast leaves it fast.
	addFast(wq, lanes, "ns/cr-3")
	wq.Add("ns/cr-3")
	if d := lanes.Depth(Fast); d != 1 {
		t.Fatalf("fast depth = %d after a slow add of a fast key, want 1", d)
	}
}

func TestAFastCauseDuringWorkIsFastAfterDone(t *testing.T) {
	wq, lanes := newWorkQueue(t, Options[string]{})
	wq.Add("ns/a")
	wq.Add("ns/b")
	k := take(t, wq) // ns/a, slow, in flight
	addFast(wq, lanes, k)
	if d := lanes.Depth(Fast); d != 0 {
		t.Fatalf("a key in flight is queued (fast depth %d): it would run twice at once", d)
	}
	wq.Done(k)
	if d := lanes.Depth(Fast); d != 1 {
		t.Fatalf("fast depth after Done = %d, want 1", d)
	}
	if got := take(t, wq); got != k {
		t.Fatalf("take = %s, want %s back in the fast lane", got, k)
	}
}

// TestModelNeverTwiceInFlight drives the work queue with random adds (fast or slow), takes
// and dones, and checks against a model: a key is never taken while in flight, never waits
// in both lanes, and every add is followed by a take.
func TestModelNeverTwiceInFlight(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		wq, lanes := newWorkQueue(t, Options[string]{SlowEvery: 1 + int(seed%8)})
		inFlight := map[string]bool{}
		owed := map[string]bool{} // added since its last take
		var flying []string
		for step := range 5000 {
			switch op := r.IntN(10); {
			case op < 5:
				k := fmt.Sprintf("ns-%d/cr-%d", r.IntN(4), r.IntN(30))
				if r.IntN(2) == 0 {
					lanes.Fast(k)
				}
				wq.Add(k)
				owed[k] = true
			case op < 8 && wq.Len() > 0:
				k := take(t, wq)
				if inFlight[k] {
					t.Fatalf("seed %d step %d: %s taken twice at once", seed, step, k)
				}
				if !owed[k] {
					t.Fatalf("seed %d step %d: %s taken with no add since its last take", seed, step, k)
				}
				lanes.Taken(k)
				inFlight[k], owed[k] = true, false
				flying = append(flying, k)
			case len(flying) > 0:
				i := r.IntN(len(flying))
				k := flying[i]
				flying = append(flying[:i], flying[i+1:]...)
				delete(inFlight, k)
				wq.Done(k)
			}
			if got, want := lanes.Depth(Fast)+lanes.Depth(Slow), wq.Len(); got != want {
				t.Fatalf("seed %d step %d: lanes hold %d keys, queue %d", seed, step, got, want)
			}
		}
		// Drain: every owed key comes out once.
		for _, k := range flying {
			wq.Done(k)
		}
		for wq.Len() > 0 {
			k := take(t, wq)
			if !owed[k] {
				t.Fatalf("seed %d: %s taken at drain with no add owed", seed, k)
			}
			owed[k] = false
			wq.Done(k)
		}
		for k, o := range owed {
			if o {
				t.Fatalf("seed %d: %s was added and never taken", seed, k)
			}
		}
	}
}

// recorder is an Observer that keeps what it is told.
type recorder struct {
	lane  map[Lane]int
	ns    map[string]int
	waits map[Lane][]time.Duration
}

func (r *recorder) LaneDepth(l Lane, n int) { r.lane[l] = n }
func (r *recorder) NamespaceDepth(ns string, n int) {
	if n == 0 {
		delete(r.ns, ns)
		return
	}
	r.ns[ns] = n
}
func (r *recorder) Waited(l Lane, d time.Duration) { r.waits[l] = append(r.waits[l], d) }

func TestObserverSeesDepthsAndWaits(t *testing.T) {
	now := time.Unix(1000, 0)
	rec := &recorder{lane: map[Lane]int{}, ns: map[string]int{}, waits: map[Lane][]time.Duration{}}
	wq, lanes := newWorkQueue(t, Options[string]{Observer: rec, Now: func() time.Time { return now }})
	wq.Add("a/1")
	wq.Add("a/2")
	addFast(wq, lanes, "b/1")
	if rec.lane[Slow] != 2 || rec.lane[Fast] != 1 {
		t.Fatalf("lane depths = %v, want slow 2, fast 1", rec.lane)
	}
	if rec.ns["a"] != 2 || rec.ns["b"] != 1 {
		t.Fatalf("namespace depths = %v", rec.ns)
	}
	now = now.Add(3 * time.Second)
	wq.Done(take(t, wq)) // b/1
	if _, ok := rec.ns["b"]; ok {
		t.Fatalf("namespace b still reported with no keys: %v", rec.ns)
	}
	if w := rec.waits[Fast]; len(w) != 1 || w[0] != 3*time.Second {
		t.Fatalf("fast waits = %v, want [3s]", w)
	}
	addFast(wq, lanes, "a/2") // promoted: its wait counts from its first push
	now = now.Add(time.Second)
	wq.Done(take(t, wq))
	if w := rec.waits[Fast]; len(w) != 2 || w[1] != 4*time.Second {
		t.Fatalf("fast waits = %v, want [3s 4s]", w)
	}
	if rec.lane[Slow] != 1 || rec.lane[Fast] != 0 || rec.ns["a"] != 1 {
		t.Fatalf("depths = %v %v", rec.lane, rec.ns)
	}
}

// TestDelayedAddsKeepTheirLane plugs the lane queue under client-go's rate-limiting and
// delaying queues, as the engine does: a retry of a fast key, marked before
// AddRateLimited, arrives in the fast lane when its backoff ends.
func TestDelayedAddsKeepTheirLane(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	lanes := New(Options[string]{Group: namespaceOf})
	base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Queue: lanes, Clock: clk})
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		workqueue.TypedRateLimitingQueueConfig[string]{Clock: clk, DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(
			workqueue.TypedDelayingQueueConfig[string]{Clock: clk, Queue: base})})
	defer q.ShutDown()
	q.Add("ns/slow")
	lanes.Fast("ns/retry")
	q.AddRateLimited("ns/retry")
	// The delaying queue's goroutine adds the key once the clock passes its backoff; it may
	// not have armed its timer yet when Step runs, so step until the key is there (bounded:
	// the loop gives up after 5s of real time).
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the rate-limited add never arrived")
		}
		clk.Step(time.Second)
		runtime.Gosched() // lets the delaying queue's goroutine run
	}
	if k, _ := q.Get(); k != "ns/retry" {
		t.Fatalf("first take = %s, want the fast retry", k)
	}
}
