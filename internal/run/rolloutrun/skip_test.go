package rolloutrun_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// sideWithChild answers ok with status.by naming the side and one ConfigMap that is the
// same on both sides: the candidate's answer differs from stable's in status alone.
func sideWithChild(side string) func(runtest.Call) runtest.Response {
	return func(c runtest.Call) runtest.Response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"by": side},
			"resources": []any{map[string]any{"type": "configmap", "fields": map[string]any{"name": c.CRName() + "-cfg", "data": map[string]any{"a": "1"}}}}})
	}
}

// applied counts each CR's calls whose answer is applied (not a shadow's dry run).
func applied(ep *runtest.Endpoint, before int, into map[string]int) {
	for _, c := range ep.Recorded()[before:] {
		if !dryRunOf(c) {
			into[c.CRName()]++
		}
	}
}

// With reconcile.remote.skipUnchanged, a restart during a rollout skips nothing: the
// records of converged CRs hold their inputs and children, and the Katalog's new candidate
// is left out of the record's digest, but every CR is called, on its side. The CR the
// candidate answers for records the candidate in status.lastDecision.reconciler.side (its
// answer changes its status, so the pass writes a record).
func TestSkipUnchangedNeverSkipsDuringARollout(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	stable := runtest.NewEndpoint(t, sideWithChild("stable"))
	cand := runtest.NewEndpoint(t, sideWithChild("candidate"))
	spec := runtest.RemoteSpec{Endpoint: stable.URL(), Managed: []string{"/configmaps"},
		Extra: "            skipUnchanged: {maxAge: 1h}\n"}
	before := f.WriteKatalog(spec)
	// At the first step (50%) for an hour: the rollout stays in progress.
	spec.Extra += canarySpec(f, cand.URL(), "[50, 100]", "1h", "{maxErrorRatio: 0, maxDivergenceRatio: 1, minSamples: 2}")
	during := f.WriteKatalog(spec)
	names := createCRs(f, 10)
	createAnnotated(f, "pinned", map[string]any{rollout.PinAnnotation: string(rollout.Candidate)})
	names = append(names, "pinned")

	_, stop := f.StartStoppable(before, nil)
	f.Eventually("every CR reconciled by stable, its decision recorded with its children", func() (bool, error) {
		for _, n := range names {
			cr := f.GetCR(n)
			by, _, _ := unstructured.NestedString(cr.Object, "status", "by")
			d, ok, err := decision.FromStatus(cr)
			if err != nil || !ok || d.Children == "" || by != "stable" {
				return false, err
			}
		}
		return true, nil
	})
	stop()

	fromStable, fromCand := len(stable.Recorded()), len(cand.Recorded())
	f.Start(during, nil, func(o *run.Options) { o.RolloutInterval = 100 * time.Millisecond })
	calls := map[string]int{}
	f.Eventually("every CR called after the restart, each call's pass finished", func() (bool, error) {
		clear(calls)
		applied(stable, fromStable, calls)
		applied(cand, fromCand, calls)
		finished := 0.0
		for _, side := range []string{"stable", "candidate"} {
			for _, r := range []string{"success", "error", "requeue"} {
				finished += testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", r, side))
			}
		}
		n := 0
		for _, c := range calls {
			n += c
		}
		if len(calls) < len(names) || int(finished) < n {
			return false, fmt.Errorf("%d of %d CRs called, %v of %d passes finished", len(calls), len(names), finished, n)
		}
		return true, nil
	})
	if got := testutil.ToFloat64(f.Metrics.SkippedUnchanged.WithLabelValues("app")); got != 0 {
		t.Errorf("ork_reconcile_skipped_unchanged_total = %v during a rollout, want 0", got)
	}
	if s, ok := rolloutStateOf(f); !ok || s.Phase != rollout.Progressing {
		t.Errorf("rollout state %+v (written: %v): want Progressing, else nothing was in progress", s, ok)
	}
	f.Eventually("the pinned CR answered by the candidate", func() (bool, error) {
		by, _, _ := unstructured.NestedString(f.GetCR("pinned").Object, "status", "by")
		return by == "candidate", nil
	})
	d := lastDecisionOf(t, f.GetCR("pinned"))
	if d.Reconciler.Side != string(rollout.Candidate) {
		t.Errorf("the pinned CR's status.lastDecision.reconciler = %+v, want side %q", d.Reconciler, rollout.Candidate)
	}
}

func lastDecisionOf(t *testing.T, cr *unstructured.Unstructured) decision.LastDecision {
	t.Helper()
	d, ok, err := decision.FromStatus(cr)
	if err != nil || !ok {
		t.Fatalf("status.lastDecision of %s: ok %v, err %v: %v", cr.GetName(), ok, err, cr.Object["status"])
	}
	return d
}
