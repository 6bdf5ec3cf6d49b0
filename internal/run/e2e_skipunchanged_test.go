package run_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

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
	f.Eventually("a first pass of every CR after the restart", func() (bool, error) {
		n := len(ep.Recorded()) - before
		return n+f.skipped() >= crs && f.finishedPasses() >= n, nil
	})
	return before, stop
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
	for i := range crs {
		f.CreateCR(name(i), map[string]any{})
	}
	for i := range crs {
		f.WaitReady(name(i), "True")
	}
	f.waitPassesDone(ep)
	f.Eventually("every CR's decision recorded with its children", func() (bool, error) {
		for i := range crs {
			if lastDecisionOf(t, f.GetCR(name(i))).Children == "" {
				return false, nil
			}
		}
		return true, nil
	})
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

// A leader change is the other failover: the standby that takes the Lease over converged
// CRs calls none of them.
func TestSkipUnchangedLeaderChangeCallsNothing(t *testing.T) {
	t.Parallel()
	const crs = 10
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, oneConfigMap)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"},
		Extra: "            skipUnchanged: {maxAge: 1h}\n"})
	elect := func(id string) func(*run.Options) {
		return func(o *run.Options) { o.LeaderElect, o.Identity, o.LeaseName = true, id, "ork-skip" }
	}
	a := f.NewEngine(set, nil, elect("replica-a"))
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan error, 1)
	go func() { doneA <- a.Run(ctxA) }()
	f.Eventually("replica-a leading and ready", func() (bool, error) { return a.Ready(), nil })
	for i := range crs {
		f.CreateCR(fmt.Sprintf("app-%02d", i), map[string]any{})
	}
	for i := range crs {
		f.WaitReady(fmt.Sprintf("app-%02d", i), "True")
	}
	f.waitPassesDone(ep)
	f.Eventually("every CR's decision recorded with its children", func() (bool, error) {
		for i := range crs {
			if lastDecisionOf(t, f.GetCR(fmt.Sprintf("app-%02d", i))).Children == "" {
				return false, nil
			}
		}
		return true, nil
	})
	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("replica-a stopped with %v", err)
	}

	before, stop := f.restartPasses(ep, crs, func() func() {
		b := f.NewEngine(set, nil, elect("replica-b"))
		ctxB, stopB := context.WithCancel(context.Background())
		doneB := make(chan error, 1)
		go func() { doneB <- b.Run(ctxB) }()
		f.Eventually("replica-b leading and ready", func() (bool, error) { return b.Ready(), nil })
		return func() {
			stopB()
			if err := <-doneB; err != nil {
				t.Errorf("replica-b: %v", err)
			}
		}
	})
	defer stop()
	if calls, total := callsSince(ep, before); total != 0 {
		t.Errorf("the new leader made %d calls over converged CRs (%v), want none", total, calls)
	}
}
