package childwrite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/planner"
)

// The model tests run in a synctest bubble: time is fake and moves only when every goroutine
// of the bubble is blocked, so a request "taking" one unit (a sleep in the bubble) costs no
// real time and the figures below are exact, not measured.
const modelRequest = time.Millisecond

var modelGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// modelCluster is the apiserver of the model: each child's controller uid. A read and a
// write each take one request's time. A write onto an absent child creates it and names the
// writer its controller, as a server-side apply under ork's one field manager does: without
// the locks, two CRs that both read "absent" would both succeed.
type modelCluster struct {
	mu    sync.Mutex
	owner map[Ref]types.UID
}

func (m *modelCluster) read(ref Ref) metav1.Object {
	time.Sleep(modelRequest)
	m.mu.Lock()
	defer m.mu.Unlock()
	uid, ok := m.owner[ref]
	if !ok {
		return nil
	}
	live := &metav1.ObjectMeta{Name: ref.name, Namespace: ref.namespace}
	live.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "App", Name: "owner-" + string(uid), UID: uid, Controller: ptr.To(true)}})
	return live
}

func (m *modelCluster) write(ref Ref, uid types.UID) {
	time.Sleep(modelRequest)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owner[ref] = uid
}

func (m *modelCluster) ownerOf(ref Ref) (types.UID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	uid, ok := m.owner[ref]
	return uid, ok
}

func modelCR(name string) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion("example.com/v1")
	cr.SetKind("App")
	cr.SetName(name)
	cr.SetNamespace("ns")
	cr.SetUID(types.UID("uid-" + name))
	return cr
}

func modelRef(name string) Ref {
	return Ref{gr: modelGVR.GroupResource(), namespace: "ns", name: name}
}

// modelPass is applyAll's order for children the cache does not show (the first pass of a
// CR): lock them all, read and judge each with the engine's own rules (all or nothing),
// then write each, letting its lock go after its write.
func modelPass(ctx context.Context, locks *Locks, m *modelCluster, cr *unstructured.Unstructured, refs []Ref, waited func(time.Duration)) error {
	held, err := locks.lock(ctx, refs, childLockWait, waited)
	if err != nil {
		return err
	}
	defer held.releaseAll()
	for _, ref := range refs {
		live := m.read(ref)
		if f := planner.Judge(cr, live, modelGVR.Resource, ""); f != nil {
			return refused(f)
		}
	}
	for _, ref := range refs {
		m.write(ref, cr.GetUID())
		held.release(ref)
	}
	return nil
}

// Throughput grows with the workers, in proportion: unrelated CRs (20 children each) never
// wait for each other's locks, and no entry is left behind.
func TestChildLocksLetUnrelatedCRsRunInParallel(t *testing.T) {
	const crs, children = 24, 20
	perPass := 2 * children * modelRequest // a read and a write per child
	for _, workers := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				locks, m := NewLocks(), &modelCluster{owner: map[Ref]types.UID{}}
				var mu sync.Mutex
				var waits []time.Duration
				queue := make(chan int, crs)
				for i := range crs {
					queue <- i
				}
				close(queue)
				start := time.Now()
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for i := range queue {
							cr := modelCR(fmt.Sprintf("cr%d", i))
							refs := make([]Ref, children)
							for j := range refs {
								refs[j] = modelRef(fmt.Sprintf("cr%d-child%d", i, j))
							}
							err := modelPass(t.Context(), locks, m, cr, refs, func(d time.Duration) {
								mu.Lock()
								waits = append(waits, d)
								mu.Unlock()
							})
							if err != nil {
								t.Errorf("pass of %s: %v", cr.GetName(), err)
							}
						}
					})
				}
				wg.Wait()
				took := time.Since(start)
				if want := time.Duration(crs/workers) * perPass; took != want {
					t.Errorf("%d CRs with %d workers took %v, want %v (%d rounds of one %v pass): throughput not in proportion to the workers",
						crs, workers, took, want, crs/workers, perPass)
				}
				if len(waits) != crs*children {
					t.Errorf("%d lock waits observed, want one per child (%d)", len(waits), crs*children)
				}
				for _, d := range waits {
					if d != 0 {
						t.Fatalf("a lock wait of %v: unrelated CRs waited for each other", d)
					}
				}
				if n := locks.size(); n != 0 {
					t.Errorf("%d lock entries left after every pass: memory grows with the children seen", n)
				}
			})
		})
	}
}

// Two CRs whose answers name the same absent child cannot both win, whoever starts first and
// however their requests interleave: exactly one creates it, the other fails AlreadyOwned
// with nothing of its answer written.
func TestChildLocksTwoCRsRacingForOneChildOneWins(t *testing.T) {
	for offset := range 4 {
		t.Run(fmt.Sprintf("b starts %d requests later", offset), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				locks, m := NewLocks(), &modelCluster{owner: map[Ref]types.UID{}}
				shared := modelRef("shared")
				errs := map[string]error{}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i, name := range []string{"a", "b"} {
					wg.Go(func() {
						time.Sleep(time.Duration(i*offset) * modelRequest)
						// Each lists its own children around the shared one, in its own order.
						refs := []Ref{modelRef(name + "-1"), shared, modelRef(name + "-2")}
						if name == "b" {
							refs = []Ref{modelRef(name + "-2"), shared, modelRef(name + "-1")}
						}
						err := modelPass(t.Context(), locks, m, modelCR(name), refs, nil)
						mu.Lock()
						errs[name] = err
						mu.Unlock()
					})
				}
				wg.Wait()
				var winners, losers []string
				for _, name := range []string{"a", "b"} {
					var pe *Error
					switch err := errs[name]; {
					case err == nil:
						winners = append(winners, name)
					case errors.As(err, &pe) && pe.Reason == planner.ReasonAlreadyOwned:
						losers = append(losers, name)
					default:
						t.Errorf("pass of %s: %v, want success or AlreadyOwned", name, err)
					}
				}
				if len(winners) != 1 || len(losers) != 1 {
					t.Fatalf("winners %v, AlreadyOwned %v: want exactly one of each", winners, losers)
				}
				if uid, _ := m.ownerOf(shared); uid != modelCR(winners[0]).GetUID() {
					t.Errorf("the shared child is controlled by %q, want the winner %s", uid, winners[0])
				}
				for _, suffix := range []string{"-1", "-2"} {
					if _, ok := m.ownerOf(modelRef(losers[0] + suffix)); ok {
						t.Errorf("%s%s was written: the loser's answer must not be applied at all", losers[0], suffix)
					}
				}
				if n := locks.size(); n != 0 {
					t.Errorf("%d lock entries left", n)
				}
			})
		})
	}
}

// A pass that cannot get a lock within 10 s fails (ApplyFailed, naming the child) instead of
// holding its worker, and holds nothing afterwards; one whose context ends stops waiting
// then. Locks taken in opposite orders by two passes never deadlock.
func TestChildLocksWaitIsBounded(t *testing.T) {
	x, y, a := modelRef("x"), modelRef("y"), modelRef("a")
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			locks := NewLocks()
			holder, err := locks.lock(t.Context(), []Ref{x}, childLockWait, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			// a sorts before x: it is taken, then x is waited for; the failure lets a go.
			_, err = locks.lock(t.Context(), []Ref{x, a}, childLockWait, nil)
			var pe *Error
			if !errors.As(err, &pe) || pe.Reason != reasonApplyFailed || pe.Error() != "waited 10s for the ownership check of configmaps/x" {
				t.Fatalf("lock of a held child: %v, want ApplyFailed: waited 10s for the ownership check of configmaps/x", err)
			}
			if took := time.Since(start); took != childLockWait {
				t.Errorf("gave up after %v, want %v", took, childLockWait)
			}
			other, err := locks.lock(t.Context(), []Ref{a}, time.Nanosecond, nil)
			if err != nil {
				t.Fatalf("a is still held after the failed pass: %v", err)
			}
			other.releaseAll()
			holder.releaseAll()
			if n := locks.size(); n != 0 {
				t.Errorf("%d lock entries left", n)
			}
		})
	})
	t.Run("context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			locks := NewLocks()
			holder, err := locks.lock(t.Context(), []Ref{x}, childLockWait, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.releaseAll()
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			start := time.Now()
			if _, err := locks.lock(ctx, []Ref{x}, childLockWait, nil); err == nil {
				t.Fatal("lock of a held child succeeded")
			}
			if took := time.Since(start); took != 3*time.Second {
				t.Errorf("stopped waiting after %v, want the context's 3s", took)
			}
		})
	})
	t.Run("opposite orders", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			locks, m := NewLocks(), &modelCluster{owner: map[Ref]types.UID{}}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, refs := range [][]Ref{{x, y}, {y, x}} {
				wg.Go(func() {
					errs[i] = modelPass(t.Context(), locks, m, modelCR(fmt.Sprint("cr", i)), refs, nil)
				})
			}
			wg.Wait()
			// One creates both; the other finds them its rival's. Neither waited 10s.
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Errorf("passes ended with %v and %v: want one success, one AlreadyOwned", errs[0], errs[1])
			}
		})
	})
}

// The wait each lock took is observed: a pass behind another waits for exactly the rest of
// the other's hold.
func TestChildLocksObserveTheirWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		locks := NewLocks()
		x := modelRef("x")
		holder, err := locks.lock(t.Context(), []Ref{x}, childLockWait, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			h, err := locks.lock(t.Context(), []Ref{x}, childLockWait, func(d time.Duration) { got = d })
			if err != nil {
				t.Error(err)
				return
			}
			h.releaseAll()
		}()
		time.Sleep(2 * time.Second)
		holder.release(x)
		<-done
		if got != 2*time.Second {
			t.Errorf("observed wait %v, want 2s", got)
		}
	})
}

// Which children a pass locks: only those whose ownership the cache cannot vouch for. A
// child the cache shows controlled by this CR takes no lock (its uid precondition decides),
// nor does an onCreate child that exists (never written again).
func TestChildLocksOnlyForChildrenTheCacheDoesNotShowControlled(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cr := modelCR("a")
	controlledBy := func(name string, uid types.UID) *metav1.PartialObjectMetadata {
		o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "5"}}
		if uid != "" {
			o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "App", Name: "x", UID: uid, Controller: ptr.To(true)}})
		}
		return o
	}
	for _, tc := range []struct {
		name       string
		cached     *metav1.PartialObjectMetadata
		createOnly bool
		// wroteFor is the CR ork's write book says last wrote the child ("": none).
		wroteFor types.UID
		locked   bool
	}{
		{name: "absent from the cache", locked: true},
		{name: "controlled by this CR", cached: controlledBy("c", cr.GetUID())},
		{name: "controlled by another CR", cached: controlledBy("c", "uid-b"), locked: true},
		{name: "an orphan", cached: controlledBy("c", ""), locked: true},
		{name: "controlled by this CR, but another CR wrote it since the cache's version",
			cached: controlledBy("c", cr.GetUID()), wroteFor: "uid-b", locked: true},
		{name: "an onCreate child that exists", cached: controlledBy("c", "uid-b"), createOnly: true},
		{name: "an onCreate child that is absent", createOnly: true, locked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
			if tc.cached != nil {
				if err := inf.GetIndexer().Add(tc.cached); err != nil {
					t.Fatal(err)
				}
			}
			w := New(Deps{Book: NewBook(), Children: []Cache{{GVR: gvr, Store: inf.GetIndexer()}}})
			obj := &unstructured.Unstructured{}
			obj.SetName("c")
			obj.SetNamespace("ns")
			p := planned{obj: obj, gvr: gvr, ref: RefOf(gvr.GroupResource(), obj), createOnly: tc.createOnly}
			if tc.wroteFor != "" {
				out := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "6"}}
				w.Book.Wrote(p.ref, [32]byte{1}, tc.wroteFor, nil, out)
			}
			if locked := w.ownCached(cr, p) == nil; locked != tc.locked {
				t.Errorf("locked = %v, want %v", locked, tc.locked)
			}
		})
	}
}
