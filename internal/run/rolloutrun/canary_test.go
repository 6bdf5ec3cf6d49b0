package rolloutrun_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// sideAnswer answers ok with status.by naming the side, and no resources: the tests follow
// which reconciler's answer a CR carries.
func sideAnswer(side string) func(runtest.Call) runtest.Response {
	return func(runtest.Call) runtest.Response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"by": side}})
	}
}

// canarySpec is a canary candidate for the fixture's Katalog.
func canarySpec(f *runtest.Fixture, endpoint, steps, interval, gate string) string {
	return fmt.Sprintf(`            candidate:
              endpoint: %q
              mode: canary
              auth: {secretRef: {name: reconciler-token, namespace: %s, key: token}}
              canary: {steps: %s, interval: %s}
              gate: %s
`, endpoint, f.NS, steps, interval, gate)
}

// rolloutStateOf is the CRD "app"'s state in the ConfigMap orkestra-rollout; ok is false
// when none was written yet.
func rolloutStateOf(f *runtest.Fixture) (rollout.State, bool) {
	f.T.Helper()
	cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(f.T.Context(), "orkestra-rollout", metav1.GetOptions{})
	if err != nil || cm.Data["app"] == "" {
		return rollout.State{}, false
	}
	s, err := rollout.Decode(cm.Data["app"])
	if err != nil {
		f.T.Fatal(err)
	}
	return s, true
}

// bySide counts the CRs whose status says which side reconciled them last.
func bySide(f *runtest.Fixture, names []string) map[string]int {
	f.T.Helper()
	out := map[string]int{}
	for _, n := range names {
		by, _, _ := unstructured.NestedString(f.GetCR(n).Object, "status", "by")
		out[by]++
	}
	return out
}

// createAnnotated creates a CR with annotations.
func createAnnotated(f *runtest.Fixture, name string, annotations map[string]any) {
	f.T.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.Group + "/v1", "kind": "App",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"spec":     map[string]any{"replicas": 1},
	}}
	if _, err := f.CRs().Create(f.T.Context(), u, metav1.CreateOptions{}); err != nil {
		f.T.Fatal(err)
	}
}

func createCRs(f *runtest.Fixture, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("cr-%02d", i)
		f.CreateCR(names[i], map[string]any{"replicas": 1})
	}
	return names
}

// A candidate whose gate holds reaches 100% in steps, every CR reconciled by it at the end;
// with shadowRest, the stable slice is shadowed meanwhile.
func TestRolloutCanaryStepsToEveryCR(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	stable := runtest.NewEndpoint(t, sideAnswer("stable"))
	cand := runtest.NewEndpoint(t, sideAnswer("candidate"))
	// Every stable-slice pass is shadowed, and differs (status.by): maxDivergenceRatio 1.
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(), Resync: "1s",
		Extra: canarySpec(f, cand.URL(), "[25, 50, 100]", "1s", "{maxErrorRatio: 0, maxDivergenceRatio: 1, minSamples: 2}")})
	f.Start(set, nil, func(o *run.Options) { o.RolloutInterval = 100 * time.Millisecond })
	names := createCRs(f, 20)
	// Pinned to stable: stays there at 100%. A pin naming no side is ignored, with an Event.
	createAnnotated(f, "pinned", map[string]any{rollout.PinAnnotation: "stable"})
	createAnnotated(f, "badpin", map[string]any{rollout.PinAnnotation: "canary"})
	names = append(names, "badpin")

	// Bound: three steps of 1 s, each waiting for 2 samples that the 1 s resync of 20 CRs
	// brings within a second or two.
	f.Eventually("every CR reconciled by the candidate, the rollout complete", func() (bool, error) {
		s, ok := rolloutStateOf(f)
		if ok && s.Phase == rollout.RolledBack {
			return false, fmt.Errorf("rolled back: %s", s.Reason)
		}
		return ok && s.Phase == rollout.Complete && bySide(f, names)["candidate"] == len(names), nil
	})
	if by, _, _ := unstructured.NestedString(f.GetCR("pinned").Object, "status", "by"); by != "stable" {
		t.Errorf("the CR pinned to stable was last reconciled by %q at 100%%", by)
	}
	evs, err := env.Clientset.CoreV1().Events(f.NS).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=badpin"})
	if err != nil {
		t.Fatal(err)
	}
	var pinEvents []corev1.Event
	for _, e := range evs.Items {
		if e.Reason == run.ReasonInvalidReconcilerPin {
			pinEvents = append(pinEvents, e)
		}
	}
	if len(pinEvents) != 1 || pinEvents[0].Count > 1 || pinEvents[0].Type != corev1.EventTypeWarning || !strings.Contains(pinEvents[0].Message, `"canary"`) {
		t.Errorf("InvalidReconcilerPin events on badpin: %+v; want one Warning, once, naming the value", pinEvents)
	}
	var grew []string
	for _, l := range strings.Split(f.Logs.String(), "\n") {
		if strings.Contains(l, "the canary slice grew") {
			i := strings.Index(l, "percent=")
			grew = append(grew, strings.Fields(l[i:])[0])
		}
	}
	if strings.Join(grew, " ") != "percent=50 percent=100" {
		t.Errorf("the slice grew %q; want from 25%% to 50%%, then 100%%", grew)
	}
	shadowed := 0
	for _, c := range cand.Recorded() {
		if dryRunOf(c) {
			shadowed++
		}
	}
	if shadowed == 0 {
		t.Error("no stable-slice pass was shadowed (shadowRest defaults to true)")
	}
	// The "metrics carry side": the candidate's passes are counted as its own.
	if n := testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "success", "candidate")); n == 0 {
		t.Error(`ork_reconcile_total{result="success",side="candidate"} = 0 after the candidate reconciled every CR`)
	}
}

// A candidate that starts failing at the second step fails the gate: the rollout rolls
// back, every CR the candidate reconciled is passed again by stable and converges, and the
// reason is recorded (state, Event, metric). No resync: only the rollback passes the CRs
// the candidate reconciled before it broke.
func TestRolloutCanaryRollsBackWhenTheGateFails(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	stable := runtest.NewEndpoint(t, sideAnswer("stable"))
	cand := runtest.NewEndpoint(t, sideAnswer("candidate"))
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(),
		Extra: canarySpec(f, cand.URL(), "[30, 60, 100]", "3s", "{maxErrorRatio: 0, maxDivergenceRatio: 1, minSamples: 2}")})
	f.Start(set, nil, func(o *run.Options) { o.RolloutInterval = 100 * time.Millisecond })
	names := createCRs(f, 20)

	f.Eventually("the second step", func() (bool, error) {
		s, ok := rolloutStateOf(f)
		return ok && s.Step >= 1, nil
	})
	var onCandidate, onStable []string
	for _, n := range names {
		if side, _ := rollout.SideOf(f.GetCR(n).GetUID(), nil, 60); side == rollout.Candidate {
			onCandidate = append(onCandidate, n)
		} else {
			onStable = append(onStable, n)
		}
	}
	f.Eventually("the candidate's slice reconciled by it", func() (bool, error) {
		return bySide(f, onCandidate)["candidate"] == len(onCandidate), nil
	})
	cand.SetRespond(func(runtest.Call) runtest.Response {
		return runtest.Response{Status: http.StatusInternalServerError, Body: []byte("broken")}
	})
	// Passes of the stable slice, shadowed (shadowRest): the candidate's 500s are errors.
	for _, n := range onStable {
		f.PatchSpec(n, `{"spec":{"replicas":2}}`)
	}
	var state rollout.State
	f.Eventually("the rollback", func() (bool, error) {
		s, ok := rolloutStateOf(f)
		state = s
		return ok && s.Phase == rollout.RolledBack, nil
	})
	if len(onCandidate) == 0 || len(onStable) == 0 {
		t.Fatalf("the uids put every CR on one side at 60%%: the test proves nothing")
	}
	if state.FailedAtPercent != 60 || !strings.Contains(state.Reason, "error ratio") {
		t.Errorf("rolled back at %d%% for %q; want at 60%%, for the error ratio", state.FailedAtPercent, state.Reason)
	}
	f.Eventually("every CR back on stable and ready", func() (bool, error) {
		for _, n := range names {
			if c := runtest.ReadyCondition(f.GetCR(n)); c["status"] != "True" {
				return false, nil
			}
		}
		return bySide(f, names)["stable"] == len(names), nil
	})
	if got := runtest.CounterSum(t, f.Metrics, "ork_candidate_rollbacks_total", "crd", "app"); got != 1 {
		t.Errorf("ork_candidate_rollbacks_total = %v, want 1", got)
	}
	f.Eventually("the CandidateRolledBack Event on the ConfigMap", func() (bool, error) {
		evs, err := env.Clientset.CoreV1().Events(f.NS).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=orkestra-rollout"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == run.ReasonCandidateRolledBack && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "error ratio") {
				return true, nil
			}
		}
		return false, nil
	})
	// After the rollback the candidate is asked nothing more.
	seen := len(cand.Recorded())
	f.PatchSpec(onCandidate[0], `{"spec":{"replicas":3}}`)
	f.Eventually("the edit reconciled by stable", func() (bool, error) {
		cr := f.GetCR(onCandidate[0])
		return cr.GetGeneration() == readyGeneration(cr), nil
	})
	if n := len(cand.Recorded()); n != seen {
		t.Errorf("the candidate got %d calls after the rollback", n-seen)
	}
}

// A restart of ork resumes the canary at the step the ConfigMap holds, with the same CRs on
// each side: a first ork starts beside a state at step 1 (as a previous run left it), stops,
// and a second one goes on from what the first wrote.
func TestRolloutCanaryResumesAfterARestart(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	stable := runtest.NewEndpoint(t, sideAnswer("stable"))
	cand := runtest.NewEndpoint(t, sideAnswer("candidate"))
	// A long interval: the rollout stays at the step it resumed at.
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(),
		Extra: canarySpec(f, cand.URL(), "[10, 60, 100]", "1h", "{maxErrorRatio: 0, maxDivergenceRatio: 1, minSamples: 2}")})
	plan, err := rollout.PlanOf(set.CRDs[0].OperatorBox.Reconcile.Remote.Candidate)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Truncate(time.Second)
	v, _ := rollout.State{SpecHash: plan.SpecHash, Phase: rollout.Progressing, Step: 1, StepStarted: started}.Encode()
	if _, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "orkestra-rollout"}, Data: map[string]string{"app": v}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tune := func(o *run.Options) { o.RolloutInterval = 100 * time.Millisecond }

	first := f.NewEngine(set, nil, tune)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	t.Cleanup(stop)
	f.Eventually("the first ork ready", func() (bool, error) { return first.Ready(), nil })
	names := createCRs(f, 20)
	onCandidate := map[string]bool{}
	for _, n := range names {
		if side, _ := rollout.SideOf(f.GetCR(n).GetUID(), nil, 60); side == rollout.Candidate {
			onCandidate[n] = true
		}
	}
	if len(onCandidate) == 0 || len(onCandidate) == len(names) {
		t.Fatalf("the uids put every CR on one side (%d of %d on the candidate): the test proves nothing", len(onCandidate), len(names))
	}
	f.Eventually("each CR on its side at 60%", func() (bool, error) {
		return bySide(f, names)["candidate"] == len(onCandidate), nil
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("the first ork stopped with %v", err)
	}
	// Its last write holds the window of its passes: the second ork resumes it.
	before, _ := rolloutStateOf(f)
	if before.Step != 1 || !before.StepStarted.Equal(started) || before.Window.Samples < len(onCandidate) {
		t.Fatalf("state the first ork left: step %d started %v, %d samples; want step 1 started %v, at least %d samples",
			before.Step, before.StepStarted, before.Window.Samples, started, len(onCandidate))
	}

	f.Start(set, nil, tune)
	seen := len(cand.Recorded())
	for _, n := range names {
		f.PatchSpec(n, `{"spec":{"replicas":2}}`)
	}
	f.Eventually("every edit reconciled", func() (bool, error) {
		for _, n := range names {
			if cr := f.GetCR(n); cr.GetGeneration() != readyGeneration(cr) {
				return false, nil
			}
		}
		return true, nil
	})
	served := map[string]bool{}
	for _, c := range cand.Recorded()[seen:] {
		if !dryRunOf(c) {
			served[c.CRName()] = true
		}
	}
	for n := range onCandidate {
		if !served[n] {
			t.Errorf("%s, in the 60%% slice, was not reconciled by the candidate after the restart", n)
		}
	}
	for n := range served {
		if !onCandidate[n] {
			t.Errorf("%s, outside the 60%% slice, was reconciled by the candidate after the restart", n)
		}
	}
	if got := bySide(f, names); got["candidate"] != len(onCandidate) || got["stable"] != len(names)-len(onCandidate) {
		t.Errorf("sides after the restart: %v; want %d on the candidate", got, len(onCandidate))
	}
	after, _ := rolloutStateOf(f)
	if after.Step != 1 || !after.StepStarted.Equal(started) || after.Window.Samples < before.Window.Samples {
		t.Errorf("state after the restart: step %d started %v, %d samples; want step 1 started %v, at least %d samples",
			after.Step, after.StepStarted, after.Window.Samples, started, before.Window.Samples)
	}
}

// readyGeneration is the Ready condition's observedGeneration.
func readyGeneration(u *unstructured.Unstructured) int64 {
	g, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return g
}

// A candidate whose answers the apiserver refuses fails the gate: an error is a candidate
// pass whose reason is not success, the apply included, not only its call.
func TestRolloutCanaryCountsApplyFailures(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	stable := runtest.NewEndpoint(t, sideAnswer("stable"))
	cand := runtest.NewEndpoint(t, func(runtest.Call) runtest.Response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			// A valid intent the apiserver refuses: a Deployment name is a DNS subdomain.
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "Not_A_Name", "image": "nginx:1.27"}},
		}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(),
		Extra: canarySpec(f, cand.URL(), "[100]", "1h", "{maxErrorRatio: 0, maxDivergenceRatio: 1, minSamples: 2}")})
	f.Start(set, nil, func(o *run.Options) { o.RolloutInterval = 100 * time.Millisecond })
	names := createCRs(f, 3)
	var state rollout.State
	f.Eventually("the rollback", func() (bool, error) {
		s, ok := rolloutStateOf(f)
		state = s
		return ok && s.Phase == rollout.RolledBack, nil
	})
	if !strings.Contains(state.Reason, "error ratio") {
		t.Errorf("rolled back for %q; want the error ratio", state.Reason)
	}
	f.Eventually("every CR back on stable", func() (bool, error) { return bySide(f, names)["stable"] == len(names), nil })
}
