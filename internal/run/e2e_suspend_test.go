package run_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/runplan"
)

// annotateSuspend sets the suspend annotation of the CR to value, or removes it ("").
func (f *fixture) annotateSuspend(name, value string) *unstructured.Unstructured {
	f.T.Helper()
	v := "null"
	if value != "" {
		v = fmt.Sprintf("%q", value)
	}
	out, err := f.CRs().Patch(f.T.Context(), name, types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, run.SuspendAnnotation, v), metav1.PatchOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	return out
}

// heldPasses is how many passes ended without a call (a suspended CR's, among others).
func (f *fixture) heldPasses() float64 {
	return testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "requeue", "stable"))
}

// waitHeldPass waits for one more held pass than before.
func (f *fixture) waitHeldPass(before float64) {
	f.T.Helper()
	f.Eventually("a held pass", func() (bool, error) { return f.heldPasses() > before, nil })
}

// A suspended CR: one condition write, then its edits cause no call and no write; its
// delete waits, says why, and finalizeTimeout does not lift the finalizer; removing the
// annotation converges both.
func TestSuspendHoldsACRUntilTheAnnotationGoes(t *testing.T) {
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn + "            finalizeTimeout: 1s\n"}), nil)
	f.CreateCR("edit", map[string]any{"replicas": 1})
	f.CreateCR("del", map[string]any{"replicas": 1})
	for _, n := range []string{"edit", "del"} {
		f.WaitReady(n, "True")
		f.waitFinalizer(n, true)
	}

	for _, n := range []string{"edit", "del"} {
		f.annotateSuspend(n, run.SuspendValue)
	}
	var suspended *unstructured.Unstructured
	for _, n := range []string{"edit", "del"} {
		f.Eventually("Suspended=True on "+n, func() (bool, error) {
			suspended = f.GetCR(n)
			c := condition(suspended, "Suspended")
			return c != nil && c["status"] == "True" && c["reason"] == "Suspended", nil
		})
		if c := runtest.ReadyCondition(suspended); c == nil || c["status"] != "True" {
			t.Fatalf("Ready on suspended %s = %v, want it as it was (True)", n, c)
		}
	}
	if v := testutil.ToFloat64(f.Metrics.SuspendedCRs.WithLabelValues("app")); v != 2 {
		t.Fatalf("ork_suspended_crs = %v, want 2", v)
	}
	dep, err := f.Get(runtest.Deployments, "edit")
	if err != nil {
		t.Fatal(err)
	}
	calls := len(ep.CallsFor("edit"))

	// A spec edit: a pass, held: no call, no write.
	held := f.heldPasses()
	edited, err := f.CRs().Patch(t.Context(), "edit", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.waitHeldPass(held)
	if rv := f.GetCR("edit").GetResourceVersion(); rv != edited.GetResourceVersion() {
		t.Fatalf("suspended CR written after its edit: resourceVersion %s, edit left %s", rv, edited.GetResourceVersion())
	}
	if d, err := f.Get(runtest.Deployments, "edit"); err != nil || d.GetResourceVersion() != dep.GetResourceVersion() {
		t.Fatalf("suspended CR's Deployment written: %v (err %v)", d.GetResourceVersion(), err)
	}
	if n := len(ep.CallsFor("edit")); n != calls {
		t.Fatalf("%d calls for the suspended CR's edit, want none", n-calls)
	}

	// A delete: ork's finalizer holds it, a Warning Event says why; past finalizeTimeout a
	// pass (a label change) still lifts nothing.
	delCalls := len(ep.CallsFor("del"))
	if err := f.CRs().Delete(t.Context(), "del", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := f.WaitEvent("del", corev1.EventTypeWarning, "DeleteWaitsSuspended")
	t.Logf("Event: %s", ev.Message)
	deleted := f.GetCR("del").GetDeletionTimestamp()
	// Bounded wait for the clock to pass finalizeTimeout (1s, counted from the second-rounded
	// deletionTimestamp: 2s is past it whatever the rounding).
	f.Eventually("finalizeTimeout passed", func() (bool, error) { return time.Since(deleted.Time) > 2*time.Second, nil })
	held = f.heldPasses()
	f.PatchSpec("del", `{"metadata":{"labels":{"poke":"1"}}}`)
	f.waitHeldPass(held)
	if !slices.Contains(f.finalizers("del"), finalizer.Name) {
		t.Fatal("finalizeTimeout lifted the finalizer of a suspended CR")
	}
	if n := len(ep.CallsFor("del")); n != delCalls {
		t.Fatalf("%d calls for the suspended CR's delete, want none", n-delCalls)
	}

	// Removing the annotation: the edit is reconciled, Suspended goes; the delete goes on.
	f.annotateSuspend("edit", "")
	f.annotateSuspend("del", "")
	f.Eventually("edit reconciled with its edit, Suspended gone", func() (bool, error) {
		u := f.GetCR("edit")
		return condition(u, "Suspended") == nil && runtest.ReadyCondition(u)["status"] == "True" &&
			len(ep.CallsFor("edit")) > calls, nil
	})
	if c := ep.CallsFor("edit"); c[len(c)-1].Body["object"].(map[string]any)["spec"].(map[string]any)["replicas"] != float64(3) {
		t.Fatalf("the call after resuming did not carry the edit: %s", c[len(c)-1].Raw)
	}
	f.Eventually("del gone", func() (bool, error) {
		_, err := f.CRs().Get(t.Context(), "del", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	// finalizeTimeout passed while it waited: the resumed delete still gets its call.
	if c := ep.CallsFor("del"); len(c) == delCalls || c[len(c)-1].Body["prepared"].(map[string]any)["deleting"] != true {
		t.Fatalf("no deleting call after resuming: %d calls", len(c)-delCalls)
	}
	if v := testutil.ToFloat64(f.Metrics.SuspendedCRs.WithLabelValues("app")); v != 0 {
		t.Fatalf("ork_suspended_crs = %v after resuming, want 0", v)
	}
}

// Another value of the annotation is a mistake to report, once, and otherwise ignored.
func TestSuspendAnnotationWithAnotherValueIsReportedOnceAndIgnored(t *testing.T) {
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	calls := len(ep.CallsFor("web"))
	f.annotateSuspend("web", "paused")
	ev := f.WaitEvent("web", corev1.EventTypeWarning, "InvalidSuspendAnnotation")
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	f.Eventually("the edit reconciled", func() (bool, error) {
		c := ep.CallsFor("web")
		return len(c) > calls && c[len(c)-1].Body["object"].(map[string]any)["spec"].(map[string]any)["replicas"] == float64(2), nil
	})
	for _, e := range f.Events("web") {
		if e.Reason == "InvalidSuspendAnnotation" && (e.Count > 1 || e.Name != ev.Name) {
			t.Fatalf("the invalid annotation was reported again: %+v", e)
		}
	}
	if c := condition(f.GetCR("web"), "Suspended"); c != nil {
		t.Fatalf("Suspended condition on a CR whose annotation is not suspended: %v", c)
	}
}

// ork run --dry-run lists a suspended CR as suspended, not called, with nothing to change.
func TestDryRunListsSuspendedCRs(t *testing.T) {
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.CreateCR("paused", map[string]any{"replicas": 1})
	f.annotateSuspend("paused", run.SuspendValue)
	f.CreateCR("live", map[string]any{"replicas": 1})
	var mu sync.Mutex
	plans := map[string]runplan.CR{}
	eng := f.NewEngine(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil, func(o *run.Options) {
		o.DryRun = true
		o.OnPlan = func(p runplan.CR) {
			mu.Lock()
			defer mu.Unlock()
			plans[p.Name] = p
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // one pass over two CRs
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	p, ok := plans["paused"]
	if !ok || !p.Suspended || p.Called || len(p.Changes) != 0 || p.Reason != run.ReasonSuspended {
		t.Fatalf("plan of the suspended CR = %+v (listed %v), want suspended, not called, no change", p, ok)
	}
	if l := plans["live"]; l.Suspended || !l.Called {
		t.Fatalf("plan of the other CR = %+v, want called", l)
	}
	if n := len(ep.CallsFor("paused")); n != 0 {
		t.Fatalf("%d calls for the suspended CR in a dry run", n)
	}
}

// A suspended CR deleted with no finalizer of ork's gets no deleting call either.
func TestSuspendedCRDeletedWithoutFinalizerGetsNoCall(t *testing.T) {
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	f.annotateSuspend("web", run.SuspendValue)
	f.Eventually("Suspended=True", func() (bool, error) { return condition(f.GetCR("web"), "Suspended") != nil, nil })
	calls := len(ep.CallsFor("web"))
	held := f.heldPasses()
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitHeldPass(held)
	if n := len(ep.CallsFor("web")); n != calls {
		t.Fatalf("%d calls for the delete of a suspended CR, want none", n-calls)
	}
	f.Eventually("ork_suspended_crs back to 0", func() (bool, error) {
		return testutil.ToFloat64(f.Metrics.SuspendedCRs.WithLabelValues("app")) == 0, nil
	})
}

// A CR suspended while its call runs gets nothing of that call's answer: no child, and the
// next pass (the annotation's) writes the Suspended condition.
func TestSuspendedDuringTheCallAppliesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var once sync.Once
	ep := runtest.NewEndpoint(t, func(c call) response {
		once.Do(func() {
			// Suspend it while this call runs, and answer only once ork's cache has the
			// annotation (its update trigger was counted).
			updates := f.Metrics.TriggersTotal.WithLabelValues("app", "update")
			before := testutil.ToFloat64(updates)
			f.annotateSuspend("web", run.SuspendValue)
			f.Eventually("ork to see the annotation", func() (bool, error) { return testutil.ToFloat64(updates) > before, nil })
		})
		return runtest.OKWithChildren(c)
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	f.Eventually("the Suspended condition", func() (bool, error) {
		c := condition(f.GetCR("web"), "Suspended")
		return c != nil && c["status"] == "True", nil
	})
	if _, err := env.Clientset.AppsV1().Deployments(f.NS).Get(t.Context(), "web", getOpts); err == nil {
		t.Error("the answer of a call during which the CR was suspended was applied: its Deployment exists")
	}
}

// A delete that waited while the CR was suspended gets its deleting call once the annotation
// goes, even past finalizeTimeout, also when the CRD keeps no Suspended condition to tell the
// resume by: ork remembers that the CR was suspended at its last pass.
func TestSuspendedDeleteIsCalledAfterResumeWithoutTheCondition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		crd  runtest.CRDOptions
	}{
		{name: "no status subresource", crd: runtest.CRDOptions{NoStatus: true}},
		{name: "status schema prunes conditions", crd: runtest.CRDOptions{StatusProps: "                  phase: {type: string}\n", PrunedStatus: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureWith(t, tc.crd)
			ep := runtest.NewEndpoint(t, func(c call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
			f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn + "            finalizeTimeout: 1s\n"}), nil)
			f.liftFinalizersAtCleanup("web")
			f.CreateCR("web", map[string]any{})
			f.waitFinalizer("web", true)
			f.annotateSuspend("web", run.SuspendValue)
			f.Eventually("the suspended pass", func() (bool, error) {
				return testutil.ToFloat64(f.Metrics.SuspendedCRs.WithLabelValues("app")) == 1, nil
			})
			calls := len(ep.CallsFor("web"))
			if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			f.WaitEvent("web", corev1.EventTypeWarning, "DeleteWaitsSuspended")
			deleted := f.GetCR("web").GetDeletionTimestamp()
			// Bounded wait for the clock to pass finalizeTimeout (1s from the second-rounded
			// deletionTimestamp: 2s is past it whatever the rounding).
			f.Eventually("finalizeTimeout passed", func() (bool, error) { return time.Since(deleted.Time) > 2*time.Second, nil })

			f.annotateSuspend("web", "")
			f.waitGone("web")
			c := ep.CallsFor("web")
			if len(c) == calls || !runtest.Deleting(c[len(c)-1]) {
				t.Fatalf("no deleting call after resuming: %d calls since the delete", len(c)-calls)
			}
			for _, e := range f.Events("web") {
				if e.Reason == run.EventFinalizeTimeout {
					t.Fatalf("the resumed delete's finalizer was lifted at finalizeTimeout: %s", e.Message)
				}
			}
		})
	}
}

// ork's memory of a suspended CR goes with ork: a delete resumed while ork was stopped is
// known as resumed from the Suspended condition, and gets its call past finalizeTimeout.
func TestSuspendedDeleteResumedWhileOrkWasStoppedIsCalled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn + "            finalizeTimeout: 1s\n"})
	_, stop := f.StartStoppable(set, nil)
	f.liftFinalizersAtCleanup("web")
	f.CreateCR("web", map[string]any{})
	f.waitFinalizer("web", true)
	f.annotateSuspend("web", run.SuspendValue)
	f.Eventually("Suspended=True", func() (bool, error) { return condition(f.GetCR("web"), "Suspended") != nil, nil })
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitEvent("web", corev1.EventTypeWarning, "DeleteWaitsSuspended")
	stop()
	calls := len(ep.CallsFor("web"))
	f.annotateSuspend("web", "")
	deleted := f.GetCR("web").GetDeletionTimestamp()
	// Bounded wait for the clock to pass finalizeTimeout (as above).
	f.Eventually("finalizeTimeout passed", func() (bool, error) { return time.Since(deleted.Time) > 2*time.Second, nil })

	f.Start(set, nil)
	f.waitGone("web")
	if c := ep.CallsFor("web"); len(c) == calls || !runtest.Deleting(c[len(c)-1]) {
		t.Fatalf("no deleting call after resuming across a restart: %d calls", len(c)-calls)
	}
}

// The annotation removed while ork writes the Suspended condition: the write meets a
// conflict, and its retry, on the fresh object, finds the CR no longer suspended and adds
// nothing; the resume's own pass calls the reconciler.
func TestSuspendedConditionIsNotAddedAfterTheAnnotationWent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	faults := newAPIFaults()
	statusPath := fmt.Sprintf("/apis/%s/v1/namespaces/%s/apps/web/status", f.Group, f.NS)
	var raced sync.Once
	var removed, readded atomic.Bool
	faults.beforeRequest = func(req *http.Request) {
		if req.Method != http.MethodPatch || req.URL.Path != statusPath || req.GetBody == nil {
			return
		}
		body, err := req.GetBody()
		if err != nil {
			t.Errorf("read ork's status patch: %v", err)
			return
		}
		raw, _ := io.ReadAll(body)
		if !strings.Contains(string(raw), `"type":"Suspended"`) {
			return
		}
		if removed.Load() {
			readded.Store(true) // a retry that adds it without the annotation
			return
		}
		// ork's Suspended write is on its way: the annotation goes first.
		raced.Do(func() {
			if _, err := f.CRs().Patch(context.Background(), "web", types.MergePatchType,
				fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, run.SuspendAnnotation), metav1.PatchOptions{}); err != nil {
				t.Errorf("remove the annotation: %v", err)
				return
			}
			removed.Store(true)
		})
	}
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), faults.config(env.Config))
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	calls := len(ep.CallsFor("web"))
	f.annotateSuspend("web", run.SuspendValue)
	f.Eventually("the annotation removed under ork's Suspended write", func() (bool, error) { return removed.Load(), nil })
	f.Eventually("the resume's call", func() (bool, error) { return len(ep.CallsFor("web")) > calls, nil })
	if readded.Load() {
		t.Error("the Suspended condition was written again after the annotation went (the retry of a conflict)")
	}
	f.Eventually("Ready and no Suspended condition", func() (bool, error) {
		u := f.GetCR("web")
		return condition(u, "Suspended") == nil && runtest.ReadyCondition(u)["status"] == "True", nil
	})
}

// A resumed delete whose first call fails is still owed a call: finalizeTimeout counts from
// the resume, not from the deletionTimestamp that passed while the CR was suspended, so the
// retry calls the reconciler instead of lifting the finalizer without its clean-up.
func TestResumedDeleteWhoseFirstCallFailsIsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var failed atomic.Bool
	var resumed atomic.Bool
	ep := runtest.NewEndpoint(t, func(c call) response {
		if resumed.Load() && runtest.Deleting(c) && failed.CompareAndSwap(false, true) {
			return response{Status: http.StatusInternalServerError, Body: []byte("the first delete call after the resume fails")}
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	// finalizeTimeout 3s: the slack for the retry after the failed call to come (its backoff
	// is milliseconds) on a busy machine.
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn + "            finalizeTimeout: 3s\n"}), nil)
	f.liftFinalizersAtCleanup("web")
	f.CreateCR("web", map[string]any{})
	f.waitFinalizer("web", true)
	f.annotateSuspend("web", run.SuspendValue)
	f.Eventually("Suspended=True", func() (bool, error) { return condition(f.GetCR("web"), "Suspended") != nil, nil })
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitEvent("web", corev1.EventTypeWarning, "DeleteWaitsSuspended")
	deleted := f.GetCR("web").GetDeletionTimestamp()
	// Bounded wait for the clock to pass finalizeTimeout (3s from the second-rounded
	// deletionTimestamp: 4s is past it whatever the rounding).
	f.Eventually("finalizeTimeout passed", func() (bool, error) { return time.Since(deleted.Time) > 4*time.Second, nil })

	resumed.Store(true)
	f.annotateSuspend("web", "")
	f.waitGone("web")
	if !failed.Load() {
		t.Fatal("the resumed delete was never called")
	}
	for _, e := range f.Events("web") {
		if e.Reason == run.EventFinalizeTimeout {
			t.Fatalf("the resumed delete's finalizer was lifted at finalizeTimeout after its failed call: %s", e.Message)
		}
	}
	c := ep.CallsFor("web")
	if last := c[len(c)-1]; !runtest.Deleting(last) {
		t.Fatalf("the last call was not the delete's retry: %s", last.Raw)
	}
}

// The resume of a delete is on the object (Suspended=False, reason Resumed, at the resume):
// a restart after the resumed delete's call failed still owes it a call, and finalizeTimeout
// counts from the resume, not from the deletionTimestamp long past.
func TestResumedDeleteIsCalledAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var failing, resumed atomic.Bool
	failing.Store(true)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if resumed.Load() && runtest.Deleting(c) && failing.Load() {
			return response{Status: http.StatusInternalServerError, Body: []byte("the delete's clean-up fails until the restart")}
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	// finalizeTimeout 20s: the slack for the stop and the start after the resume.
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn + "            finalizeTimeout: 20s\n"})
	_, stop := f.StartStoppable(set, nil)
	f.liftFinalizersAtCleanup("web")
	f.CreateCR("web", map[string]any{})
	f.waitFinalizer("web", true)
	f.annotateSuspend("web", run.SuspendValue)
	f.Eventually("Suspended=True", func() (bool, error) { return condition(f.GetCR("web"), "Suspended") != nil, nil })
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitEvent("web", corev1.EventTypeWarning, "DeleteWaitsSuspended")
	deleted := f.GetCR("web").GetDeletionTimestamp()
	// Bounded wait for the clock to pass finalizeTimeout (20s from the second-rounded
	// deletionTimestamp: 21s is past it whatever the rounding).
	f.EventuallyWithin(time.Minute, "finalizeTimeout passed", func() (bool, error) { return time.Since(deleted.Time) > 21*time.Second, nil })

	resumed.Store(true)
	calls := len(ep.CallsFor("web"))
	f.annotateSuspend("web", "")
	f.Eventually("the resumed delete's failed call", func() (bool, error) { return len(ep.CallsFor("web")) > calls, nil })
	f.Eventually("Suspended=False, reason Resumed", func() (bool, error) {
		c := condition(f.GetCR("web"), "Suspended")
		return c != nil && c["status"] == "False" && c["reason"] == run.ReasonResumed, nil
	})
	stop()
	failing.Store(false)
	f.Start(set, nil)
	f.waitGone("web")
	for _, e := range f.Events("web") {
		if e.Reason == run.EventFinalizeTimeout {
			t.Fatalf("after the restart the resumed delete's finalizer was lifted at finalizeTimeout: %s", e.Message)
		}
	}
	if c := ep.CallsFor("web"); !runtest.Deleting(c[len(c)-1]) {
		t.Fatalf("the last call was not the delete's: %s", c[len(c)-1].Raw)
	}
}
