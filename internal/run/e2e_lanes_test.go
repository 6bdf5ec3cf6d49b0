package run_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// slowReconciler is an endpoint that takes 50 ms a call and keeps, in arrival order, which
// CR each call was for and with what trigger, and every time a CR was called while a call
// for it was still running.
type slowReconciler struct {
	ep       *endpoint
	mu       sync.Mutex
	order    []string // "namespace/name replicas=N", in arrival order
	inFlight map[string]bool
	overlaps []string
}

func newSlowReconciler(t *testing.T) *slowReconciler {
	r := &slowReconciler{inFlight: map[string]bool{}}
	r.ep = runtest.NewEndpoint(t, func(c call) response {
		o, _ := c.Body["object"].(map[string]any)
		md, _ := o["metadata"].(map[string]any)
		spec, _ := o["spec"].(map[string]any)
		key := fmt.Sprint(md["namespace"], "/", md["name"])
		r.mu.Lock()
		r.order = append(r.order, fmt.Sprintf("%s replicas=%v", key, spec["replicas"]))
		if r.inFlight[key] {
			r.overlaps = append(r.overlaps, key)
		}
		r.inFlight[key] = true
		r.mu.Unlock()
		select { // the work a real reconciler does
		case <-time.After(50 * time.Millisecond):
		case <-c.Ctx.Done():
		}
		r.mu.Lock()
		delete(r.inFlight, key)
		r.mu.Unlock()
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}})
	})
	return r
}

// calls returns the calls so far, in arrival order.
func (r *slowReconciler) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.order...)
}

func (r *slowReconciler) checkNoOverlap(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.overlaps) > 0 {
		t.Errorf("a CR was called while its previous call still ran: %v", r.overlaps)
	}
}

// createBacklog creates n CRs named prefix-NNN in namespace ns.
func (f *fixture) createBacklog(ns, prefix string, n int) {
	f.T.Helper()
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": f.Group + "/v1", "kind": "App",
			"metadata": map[string]any{"name": fmt.Sprintf("%s-%03d", prefix, i)},
			"spec":     map[string]any{"replicas": 1},
		}}
		if _, err := f.Dyn.Resource(f.GVR).Namespace(ns).Create(f.T.Context(), u, metav1.CreateOptions{}); err != nil {
			f.T.Fatal(err)
		}
	}
}

// A spec edit made while ork passes a start-up backlog (300 CRs, 2 workers, 50 ms a call:
// about 7.5 s of passes) does not wait behind it: the start-up passes are the slow lane, the
// edit the fast one. The edit's call is among the first workers+1 calls that arrive after the
// moment ork saw it: the calls in flight finish, and the next take is the edit's. The same
// holds for a CR created, and one deleted, while the backlog runs.
func TestSpecEditOvertakesTheStartupBacklog(t *testing.T) {
	const backlog, workers = 300, 2
	f := newFixture(t)
	r := newSlowReconciler(t)
	f.createBacklog(f.NS, "cr", backlog)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: r.ep.URL()}), nil)
	// Let the start-up passes get going (bounded: 30s; 20 calls take about 0.5s).
	f.Eventually("start-up passes under way", func() (bool, error) { return len(r.calls()) >= 20, nil })
	edited := fmt.Sprintf("cr-%03d", backlog-1) // without lanes it waits for its turn in the backlog
	seen := r.afterSeen(t, f, "update", func() { f.PatchSpec(edited, `{"spec":{"replicas":5}}`) })
	// The trigger is create: the start-up pass the edit overtook had not run yet, and a
	// pending create is not downgraded. The spec sent is the edited one.
	r.assertEarly(t, f, seen, f.NS+"/"+edited+" replicas=5", workers+1)
	// A CR created now (a watch add, not the initial list) is fast too.
	seen = r.afterSeen(t, f, "create", func() { f.createBacklog(f.NS, "new", 1) })
	r.assertEarly(t, f, seen, f.NS+"/new-000 replicas=1", workers+1)
	// And a delete (of a CR whose start-up pass has not run yet: its one call is the delete's).
	doomed := fmt.Sprintf("cr-%03d", backlog-2)
	seen = r.afterSeen(t, f, "delete", func() {
		if err := f.CRs().Delete(t.Context(), doomed, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	r.assertEarly(t, f, seen, f.NS+"/"+doomed+" replicas=1", workers+1)
	if n := len(r.calls()); n >= backlog {
		t.Fatalf("the start-up backlog was done (%d calls) before the edit's call: the test proves nothing", n)
	}
	r.checkNoOverlap(t)
}

// afterSeen runs cause and returns the number of calls that had arrived when ork counted
// its trigger (ork_reconcile_triggers_total), the moment ork saw it. The counter is polled
// every millisecond: a call arriving within that millisecond counts as after.
func (r *slowReconciler) afterSeen(t *testing.T, f *fixture, trigger string, cause func()) int {
	t.Helper()
	counter := f.Metrics.TriggersTotal.WithLabelValues("app", trigger)
	before := testutil.ToFloat64(counter)
	cause()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for testutil.ToFloat64(counter) == before {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("ork did not see the %s within 30s", trigger)
		}
	}
	return len(r.calls())
}

// assertEarly waits for the call want and fails unless it is among the first n calls that
// arrived after the first seen (or before them: ork took it before the counter was read).
func (r *slowReconciler) assertEarly(t *testing.T, f *fixture, seen int, want string, n int) {
	t.Helper()
	var at int
	f.Eventually(want, func() (bool, error) {
		at = slices.Index(r.calls(), want)
		return at >= 0, nil
	})
	if pos := at - seen + 1; pos > n {
		t.Fatalf("%s was call %d after ork saw its cause, want among the first %d: %v", want, pos, n, r.calls()[seen:at+1])
	}
}

// In one lane, namespaces take turns: five CRs of a small namespace listed at start beside
// 300 of a big one are passed within the first rounds, not after the big namespace's backlog.
func TestSmallNamespaceIsNotQueuedBehindABigOne(t *testing.T) {
	const backlog, small, workers = 300, 5, 2
	f := newFixture(t)
	other := env.Namespace(t)
	r := newSlowReconciler(t)
	f.createBacklog(f.NS, "big", backlog)
	f.createBacklog(other, "small", small)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: r.ep.URL()}), nil)
	// Round robin over two namespaces: the small one's keys are every other take; workers
	// calls may be in flight before it. Bound: 2*small + workers calls.
	bound := 2*small + workers
	f.Eventually(fmt.Sprintf("%d calls", bound), func() (bool, error) { return len(r.calls()) >= bound, nil })
	seen := 0
	first := r.calls()[:bound]
	for _, c := range first {
		if strings.HasPrefix(c, other+"/") {
			seen++
		}
	}
	if seen != small {
		t.Fatalf("%d of the small namespace's %d CRs among the first %d calls, want all: %v", seen, small, bound, first)
	}
	r.checkNoOverlap(t)
}

// Under a steady stream of spec edits that keeps the fast lane full, the start-up backlog
// still moves: at least one call in every 8 is a start-up pass.
func TestSlowLaneMovesUnderASteadyStreamOfEdits(t *testing.T) {
	const backlog, hot, editors = 300, 60, 4
	f := newFixture(t)
	r := newSlowReconciler(t)
	f.createBacklog(f.NS, "cr", backlog)
	f.createBacklog(f.NS, "hot", hot)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: r.ep.URL()}), nil)
	f.Eventually("start-up passes under way", func() (bool, error) { return len(r.calls()) >= 10, nil })
	// Editors patch the hot CRs round and round, faster than 2 workers at 50 ms take them
	// (40 a second), for 3 seconds: the fast lane stays full.
	var wg sync.WaitGroup
	var edits atomic.Int64
	stop := time.Now().Add(3 * time.Second)
	from := len(r.calls())
	for e := range editors {
		wg.Go(func() {
			for i := e; time.Now().Before(stop); i += editors {
				name := fmt.Sprintf("hot-%03d", i%hot)
				patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, 2+i)
				if _, err := f.CRs().Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Error(err)
					return
				}
				edits.Add(1)
			}
		})
	}
	wg.Wait()
	window := r.calls()[from:]
	slow := 0
	for _, c := range window {
		if strings.HasSuffix(c, " replicas=1") { // not edited: a start-up pass
			slow++
		}
	}
	t.Logf("%d edits; %d calls during the stream, %d of them start-up passes", edits.Load(), len(window), slow)
	if len(window) < 40 {
		t.Fatalf("only %d calls in 3s: the workers did not keep up a stream to measure", len(window))
	}
	// In any 8 consecutive takes one is slow; the window's edges and two workers' calls
	// arriving out of take order cost at most one.
	if want := len(window)/8 - 1; slow < want {
		t.Fatalf("%d start-up passes among %d calls under the stream, want at least %d (1 in 8)", slow, len(window), want)
	}
	r.checkNoOverlap(t)
}

// The start-up backlog of an operator whose CRs own children (any real one) stays in the slow
// lane: the children's own initial list is no change to pass their owners for. Without
// this, every CR was marked fast by its child's initial add, and the edit waited behind the
// whole backlog again.
func TestSpecEditOvertakesABacklogWithChildren(t *testing.T) {
	const backlog, workers = 200, 2
	f := newFixture(t)
	r := newSlowReconciler(t)
	f.createBacklog(f.NS, "cr", backlog)
	list, err := f.Dyn.Resource(f.GVR).Namespace(f.NS).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range list.Items {
		owner := metav1.OwnerReference{APIVersion: f.Group + "/v1", Kind: "App", Name: cr.GetName(), UID: cr.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		f.createConfigMap(cr.GetName()+"-cm", map[string]string{run.ManagedByLabel: run.ManagedByValue, run.OperatorLabel: "orkestra"}, owner)
	}
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: r.ep.URL(), Managed: managedWithConfigMaps}), nil)
	f.Eventually("start-up passes under way", func() (bool, error) { return len(r.calls()) >= 20, nil })
	edited := fmt.Sprintf("cr-%03d", backlog-1)
	seen := r.afterSeen(t, f, "update", func() { f.PatchSpec(edited, `{"spec":{"replicas":5}}`) })
	r.assertEarly(t, f, seen, f.NS+"/"+edited+" replicas=5", workers+1)
	if n := len(r.calls()); n >= backlog {
		t.Fatalf("the start-up backlog was done (%d calls) before the edit's call: the test proves nothing", n)
	}
}
