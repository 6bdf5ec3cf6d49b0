package run_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// oneConfigMap answers every call with one ConfigMap named after the CR and a status that
// does not depend on the trigger: the same question gets the same answer.
func oneConfigMap(c runtest.Call) runtest.Response {
	return runtest.JSONResponse(map[string]any{
		"result": "ok",
		"status": map[string]any{"phase": "Ready"},
		"resources": []any{
			map[string]any{"type": "configmap", "fields": map[string]any{"name": c.CRName() + "-cfg", "data": map[string]any{"a": "1", "b": "2"}}},
		},
	})
}

// skipped counts the passes the fixture's current engine skipped.
func (f *fixture) skipped() int {
	return int(testutil.ToFloat64(f.Metrics.SkippedUnchanged.WithLabelValues("app")))
}

// restartPasses starts ork with start and waits until every one of crs CRs has had its
// first pass, called or skipped, and every call's pass has finished. before is the number of
// calls the endpoint had received until then.
func (f *fixture) restartPasses(ep *endpoint, crs int, start func() func()) (before int, stop func()) {
	f.T.Helper()
	before = len(ep.Recorded())
	stop = start()
	// Bounded by Eventually's deadline: the passes of the whole restart, skipped or not.
	// The CRs called, not the calls: a CR called twice must not stand for one not called yet.
	f.Eventually("a first pass of every CR after the restart", func() (bool, error) {
		called, n := callsSince(ep, before)
		return len(called)+f.skipped() >= crs && f.finishedPasses() >= n, nil
	})
	return before, stop
}

// convergeRecorded creates crs CRs named by name with an engine running and waits until each
// is Ready, every call's pass has finished and each CR's status.lastDecision records its
// children: the state a failover with skipUnchanged starts from.
func (f *fixture) convergeRecorded(ep *endpoint, crs int, name func(int) string) {
	f.T.Helper()
	for i := range crs {
		f.CreateCR(name(i), map[string]any{})
	}
	for i := range crs {
		f.WaitReady(name(i), "True")
	}
	f.waitPassesDone(ep)
	f.Eventually("every CR's decision recorded with its children", func() (bool, error) {
		for i := range crs {
			d, ok, err := decision.FromStatus(f.GetCR(name(i)))
			if err != nil || !ok || d.Children == "" {
				return false, err
			}
		}
		return true, nil
	})
}

// callsSince counts the calls the endpoint received after its first before, by CR.
func callsSince(ep *endpoint, before int) (byCR map[string]int, total int) {
	byCR = map[string]int{}
	for _, c := range ep.Recorded()[before:] {
		byCR[c.CRName()]++
		total++
	}
	return byCR, total
}

// With reconcile.remote.skipUnchanged, a restart over converged CRs calls only those whose
// inputs or children changed while no ork ran: one CR's spec edited, one child's field
// changed by another manager (drift, repaired by the call). Every other CR's first pass
// skips its call and writes nothing. The same restart without skipUnchanged calls every CR.
func TestSkipUnchangedRestartCallsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	const crs = 100
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, oneConfigMap)
	spec := runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}}
	plain := f.WriteKatalog(spec)
	spec.Extra = "            skipUnchanged: {maxAge: 1h}\n"
	skipping := f.WriteKatalog(spec)
	name := func(i int) string { return fmt.Sprintf("app-%03d", i) }

	stop := f.runEngine(skipping, nil)
	f.convergeRecorded(ep, crs, name)
	stop()

	const edited, drifted, quiet = 7, 42, 0
	f.PatchSpec(name(edited), `{"spec":{"replicas":3}}`)
	f.editChild(runtest.ConfigMaps, name(drifted)+"-cfg", `{"data":{"a":"changed by hand"}}`)
	quietRV := f.GetCR(name(quiet)).GetResourceVersion()

	before, stop := f.restartPasses(ep, crs, func() func() { return f.runEngine(skipping, nil) })
	calls, _ := callsSince(ep, before)
	if calls[name(edited)] == 0 {
		t.Errorf("%s, whose spec changed while ork was stopped, was not called", name(edited))
	}
	if calls[name(drifted)] == 0 {
		t.Errorf("%s, whose child another manager changed while ork was stopped, was not called", name(drifted))
	}
	if got := f.skipped(); got != crs-len(calls) {
		t.Errorf("ork_reconcile_skipped_unchanged_total = %d, want %d (the CRs not called)", got, crs-len(calls))
	}
	f.Eventually("the drifted child repaired", func() (bool, error) {
		cm, err := f.Get(runtest.ConfigMaps, name(drifted)+"-cfg")
		if err != nil {
			return false, err
		}
		return cm.Object["data"].(map[string]any)["a"] == "1", nil
	})
	if rv := f.GetCR(name(quiet)).GetResourceVersion(); rv != quietRV {
		t.Errorf("%s was written by its skipped pass: resourceVersion %s, was %s", name(quiet), rv, quietRV)
	}
	calls, withCalls := callsSince(ep, before) // the repair included
	stop()

	before, stop = f.restartPasses(ep, crs, func() func() { return f.runEngine(plain, nil) })
	without, withoutCalls := callsSince(ep, before)
	stop()
	if len(without) != crs {
		t.Errorf("without skipUnchanged, %d CRs were called after the restart, want all %d", len(without), crs)
	}
	t.Logf("calls after the restart: %d with skipUnchanged (of %d CRs), %d without", withCalls, len(calls), withoutCalls)
	// Only the two CRs that changed were called (a retry of one of them, which a busy
	// machine may cause, is still theirs): 2% of the CRs the same restart without
	// skipUnchanged calls.
	for cr := range calls {
		if cr != name(edited) && cr != name(drifted) {
			t.Errorf("%s, unchanged while ork was stopped, was called after the restart", cr)
		}
	}
	if len(calls)*50 > len(without) {
		t.Errorf("with skipUnchanged, %d CRs called after the restart; without it %d: more than 2%%", len(calls), len(without))
	}
}

// A leader change is the other failover: a new leader, winning the Lease the old one
// released, passes every CR once. With skipUnchanged it calls only the CR whose spec was
// edited while no leader ran, 1% of the calls the same leader change without skipUnchanged
// makes (every CR).
func TestSkipUnchangedLeaderChangeCallsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	const crs = 100
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, oneConfigMap)
	spec := runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}}
	plain := f.WriteKatalog(spec)
	spec.Extra = "            skipUnchanged: {maxAge: 1h}\n"
	skipping := f.WriteKatalog(spec)
	name := func(i int) string { return fmt.Sprintf("app-%03d", i) }

	stopA := f.runLeader(skipping, "replica-a")
	f.convergeRecorded(ep, crs, name)
	stopA() // released: the next candidate wins the Lease at its first try

	const edited = 17
	f.PatchSpec(name(edited), `{"spec":{"replicas":3}}`)
	before, stopB := f.restartPasses(ep, crs, func() func() { return f.runLeader(skipping, "replica-b") })
	calls, withCalls := callsSince(ep, before)
	stopB()

	before, stopC := f.restartPasses(ep, crs, func() func() { return f.runLeader(plain, "replica-c") })
	without, withoutCalls := callsSince(ep, before)
	stopC()
	t.Logf("calls after the leader change: %d with skipUnchanged (%d CRs), %d without (%d CRs)", withCalls, len(calls), withoutCalls, len(without))
	if calls[name(edited)] == 0 {
		t.Errorf("%s, whose spec changed while no leader ran, was not called by the new leader", name(edited))
	}
	for cr := range calls {
		if cr != name(edited) {
			t.Errorf("%s, unchanged while no leader ran, was called by the new leader", cr)
		}
	}
	if len(without) != crs {
		t.Errorf("without skipUnchanged, the new leader called %d CRs, want all %d", len(without), crs)
	}
	// A retry of the edited CR's call, which a busy machine may cause, is still within 2%.
	if withCalls*50 > withoutCalls {
		t.Errorf("with skipUnchanged the new leader made %d calls; without it %d: more than 2%%", withCalls, withoutCalls)
	}
}

// runLeader runs an engine of set that leads under the Lease ork-skip as id, waits until it
// leads and is ready, and returns the func that stops it (releasing the Lease).
func (f *fixture) runLeader(set *katalog.Set, id string) (stop func()) {
	f.T.Helper()
	eng, stop := f.StartStoppable(set, nil, func(o *run.Options) { o.LeaderElect, o.Identity, o.LeaseName = true, id, "ork-skip" })
	f.Eventually(id+" leading and ready", func() (bool, error) { return eng.Ready(), nil })
	return stop
}
