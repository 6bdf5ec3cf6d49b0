package run_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
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
	"github.com/orkspace/ork/internal/runplan"
)

// annotateSuspend sets the suspend annotation of the CR to value, or removes it ("").
func (f *fixture) annotateSuspend(name, value string) *unstructured.Unstructured {
	f.t.Helper()
	v := "null"
	if value != "" {
		v = fmt.Sprintf("%q", value)
	}
	out, err := f.crs().Patch(f.t.Context(), name, types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, run.SuspendAnnotation, v), metav1.PatchOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// heldPasses is how many passes ended without a call (a suspended CR's, among others).
func (f *fixture) heldPasses() float64 {
	return testutil.ToFloat64(f.metrics.ReconcileTotal.WithLabelValues("app", "requeue", "stable"))
}

// waitHeldPass waits for one more held pass than before.
func (f *fixture) waitHeldPass(before float64) {
	f.t.Helper()
	f.eventually("a held pass", func() (bool, error) { return f.heldPasses() > before, nil })
}

// A suspended CR: one condition write, then its edits cause no call and no write; its
// delete waits, says why, and finalizeTimeout does not lift the finalizer; removing the
// annotation converges both.
func TestSuspendHoldsACRUntilTheAnnotationGoes(t *testing.T) {
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, extra: finalizeOn + "            finalizeTimeout: 1s\n"}), nil)
	f.createCR("edit", map[string]any{"replicas": 1})
	f.createCR("del", map[string]any{"replicas": 1})
	for _, n := range []string{"edit", "del"} {
		f.waitReady(n, "True")
		f.waitFinalizer(n, true)
	}

	for _, n := range []string{"edit", "del"} {
		f.annotateSuspend(n, run.SuspendValue)
	}
	var suspended *unstructured.Unstructured
	for _, n := range []string{"edit", "del"} {
		f.eventually("Suspended=True on "+n, func() (bool, error) {
			suspended = f.getCR(n)
			c := condition(suspended, "Suspended")
			return c != nil && c["status"] == "True" && c["reason"] == "Suspended", nil
		})
		if c := readyCondition(suspended); c == nil || c["status"] != "True" {
			t.Fatalf("Ready on suspended %s = %v, want it as it was (True)", n, c)
		}
	}
	if v := testutil.ToFloat64(f.metrics.SuspendedCRs.WithLabelValues("app")); v != 2 {
		t.Fatalf("ork_suspended_crs = %v, want 2", v)
	}
	dep, err := f.get(deployments, "edit")
	if err != nil {
		t.Fatal(err)
	}
	calls := len(ep.callsFor("edit"))

	// A spec edit: a pass, held: no call, no write.
	held := f.heldPasses()
	edited, err := f.crs().Patch(t.Context(), "edit", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.waitHeldPass(held)
	if rv := f.getCR("edit").GetResourceVersion(); rv != edited.GetResourceVersion() {
		t.Fatalf("suspended CR written after its edit: resourceVersion %s, edit left %s", rv, edited.GetResourceVersion())
	}
	if d, err := f.get(deployments, "edit"); err != nil || d.GetResourceVersion() != dep.GetResourceVersion() {
		t.Fatalf("suspended CR's Deployment written: %v (err %v)", d.GetResourceVersion(), err)
	}
	if n := len(ep.callsFor("edit")); n != calls {
		t.Fatalf("%d calls for the suspended CR's edit, want none", n-calls)
	}

	// A delete: ork's finalizer holds it, a Warning Event says why; past finalizeTimeout a
	// pass (a label change) still lifts nothing.
	delCalls := len(ep.callsFor("del"))
	if err := f.crs().Delete(t.Context(), "del", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := f.waitEvent("del", corev1.EventTypeWarning, "DeleteWaitsSuspended")
	t.Logf("Event: %s", ev.Message)
	deleted := f.getCR("del").GetDeletionTimestamp()
	// Bounded wait for the clock to pass finalizeTimeout (1s, counted from the second-rounded
	// deletionTimestamp: 2s is past it whatever the rounding).
	f.eventually("finalizeTimeout passed", func() (bool, error) { return time.Since(deleted.Time) > 2*time.Second, nil })
	held = f.heldPasses()
	f.patchSpec("del", `{"metadata":{"labels":{"poke":"1"}}}`)
	f.waitHeldPass(held)
	if !slices.Contains(f.finalizers("del"), finalizer.Name) {
		t.Fatal("finalizeTimeout lifted the finalizer of a suspended CR")
	}
	if n := len(ep.callsFor("del")); n != delCalls {
		t.Fatalf("%d calls for the suspended CR's delete, want none", n-delCalls)
	}

	// Removing the annotation: the edit is reconciled, Suspended goes; the delete goes on.
	f.annotateSuspend("edit", "")
	f.annotateSuspend("del", "")
	f.eventually("edit reconciled with its edit, Suspended gone", func() (bool, error) {
		u := f.getCR("edit")
		return condition(u, "Suspended") == nil && readyCondition(u)["status"] == "True" &&
			len(ep.callsFor("edit")) > calls, nil
	})
	if c := ep.callsFor("edit"); c[len(c)-1].body["object"].(map[string]any)["spec"].(map[string]any)["replicas"] != float64(3) {
		t.Fatalf("the call after resuming did not carry the edit: %s", c[len(c)-1].raw)
	}
	f.eventually("del gone", func() (bool, error) {
		_, err := f.crs().Get(t.Context(), "del", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	// finalizeTimeout passed while it waited: the resumed delete still gets its call.
	if c := ep.callsFor("del"); len(c) == delCalls || c[len(c)-1].body["prepared"].(map[string]any)["deleting"] != true {
		t.Fatalf("no deleting call after resuming: %d calls", len(c)-delCalls)
	}
	if v := testutil.ToFloat64(f.metrics.SuspendedCRs.WithLabelValues("app")); v != 0 {
		t.Fatalf("ork_suspended_crs = %v after resuming, want 0", v)
	}
}

// Another value of the annotation is a mistake to report, once, and otherwise ignored.
func TestSuspendAnnotationWithAnotherValueIsReportedOnceAndIgnored(t *testing.T) {
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"replicas": 1})
	f.waitReady("web", "True")
	calls := len(ep.callsFor("web"))
	f.annotateSuspend("web", "paused")
	ev := f.waitEvent("web", corev1.EventTypeWarning, "InvalidSuspendAnnotation")
	f.patchSpec("web", `{"spec":{"replicas":2}}`)
	f.eventually("the edit reconciled", func() (bool, error) {
		c := ep.callsFor("web")
		return len(c) > calls && c[len(c)-1].body["object"].(map[string]any)["spec"].(map[string]any)["replicas"] == float64(2), nil
	})
	for _, e := range f.events("web") {
		if e.Reason == "InvalidSuspendAnnotation" && (e.Count > 1 || e.Name != ev.Name) {
			t.Fatalf("the invalid annotation was reported again: %+v", e)
		}
	}
	if c := condition(f.getCR("web"), "Suspended"); c != nil {
		t.Fatalf("Suspended condition on a CR whose annotation is not suspended: %v", c)
	}
}

// ork run --dry-run lists a suspended CR as suspended, not called, with nothing to change.
func TestDryRunListsSuspendedCRs(t *testing.T) {
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.createCR("paused", map[string]any{"replicas": 1})
	f.annotateSuspend("paused", run.SuspendValue)
	f.createCR("live", map[string]any{"replicas": 1})
	var mu sync.Mutex
	plans := map[string]runplan.CR{}
	eng := newEngine(t, f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil, f, func(o *run.Options) {
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
	if n := len(ep.callsFor("paused")); n != 0 {
		t.Fatalf("%d calls for the suspended CR in a dry run", n)
	}
}

// A suspended CR deleted with no finalizer of ork's gets no deleting call either.
func TestSuspendedCRDeletedWithoutFinalizerGetsNoCall(t *testing.T) {
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"replicas": 1})
	f.waitReady("web", "True")
	f.annotateSuspend("web", run.SuspendValue)
	f.eventually("Suspended=True", func() (bool, error) { return condition(f.getCR("web"), "Suspended") != nil, nil })
	calls := len(ep.callsFor("web"))
	held := f.heldPasses()
	if err := f.crs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitHeldPass(held)
	if n := len(ep.callsFor("web")); n != calls {
		t.Fatalf("%d calls for the delete of a suspended CR, want none", n-calls)
	}
	f.eventually("ork_suspended_crs back to 0", func() (bool, error) {
		return testutil.ToFloat64(f.metrics.SuspendedCRs.WithLabelValues("app")) == 0, nil
	})
}

// A CR suspended while its call runs gets nothing of that call's answer: no child, and the
// next pass (the annotation's) writes the Suspended condition.
func TestSuspendedDuringTheCallAppliesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var once sync.Once
	ep := newEndpoint(t, func(c call) response {
		once.Do(func() {
			// Suspend it while this call runs, and answer only once ork's cache has the
			// annotation (its update trigger was counted).
			updates := f.metrics.TriggersTotal.WithLabelValues("app", "update")
			before := testutil.ToFloat64(updates)
			f.annotateSuspend("web", run.SuspendValue)
			f.eventually("ork to see the annotation", func() (bool, error) { return testutil.ToFloat64(updates) > before, nil })
		})
		return okWithChildren(c)
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	f.eventually("the Suspended condition", func() (bool, error) {
		c := condition(f.getCR("web"), "Suspended")
		return c != nil && c["status"] == "True", nil
	})
	if _, err := env.Clientset.AppsV1().Deployments(f.ns).Get(t.Context(), "web", getOpts); err == nil {
		t.Error("the answer of a call during which the CR was suspended was applied: its Deployment exists")
	}
}
