package run_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run/runtest"
)

// A CRD whose status schema knows only phase: the apiserver drops conditions,
// observedGeneration and the reconciler's extra key from every status write, and says so in a
// warning. ork drops those keys from its later writes and says so once, instead of writing
// them again, and recording a Normal Reconciled ("Ready") Event, on every pass.
func TestStatusKeysTheSchemaPrunesAreDroppedAndReportedOnce(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, runtest.CRDOptions{StatusProps: "                  phase: {type: string}\n", PrunedStatus: true})
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Running", "extra": "x"}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Resync: "1s"}), nil)
	f.CreateCR("web", map[string]any{})
	// Five passes: the first writes and learns what is pruned, four resyncs follow.
	for range 5 {
		ep.Next(t)
	}
	// The fifth call is received: the fourth pass, its status write and Event included, is
	// over (one key, one worker at a time).
	got := f.GetCR("web")
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Running" {
		t.Errorf("status.phase = %q, want Running (the key the schema keeps is still written)", phase)
	}
	var reconciled, pruned int32
	for _, ev := range f.Events("web") {
		if ev.Reason == "Reconciled" {
			reconciled += max(ev.Count, 1)
		}
	}
	if reconciled > 1 {
		t.Errorf("%d Reconciled Events over 4 passes that changed nothing, want at most 1", reconciled)
	}
	warned := f.WaitEvent("web", corev1.EventTypeWarning, "StatusFieldPruned")
	for _, k := range []string{"conditions", "observedGeneration", "extra", "lastDecision"} {
		if !strings.Contains(warned.Message, k) {
			t.Errorf("StatusFieldPruned Event %q does not name %s", warned.Message, k)
		}
		if n := testutil.ToFloat64(f.Metrics.StatusFieldsPruned.WithLabelValues("app", k)); n != 1 {
			t.Errorf("ork_status_fields_pruned_total{field=%q} = %v, want 1 (said once)", k, n)
		}
	}
	pruned = 0
	for _, ev := range f.Events("web") {
		if ev.Reason == "StatusFieldPruned" {
			pruned += max(ev.Count, 1)
		}
	}
	if pruned != 1 {
		t.Errorf("%d StatusFieldPruned Events, want 1", pruned)
	}
	if n := strings.Count(f.Logs.String(), `msg="status field pruned by the CRD schema"`); n != 4 {
		t.Errorf("%d log lines for pruned status fields, want 4 (one per field)", n)
	}
}
