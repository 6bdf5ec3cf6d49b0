package rolloutrun_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/replaydiff"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/trace"
)

// candidateSpec is reconcile.remote.candidate for the fixture's Katalog (RemoteSpec.Extra),
// authenticated like the stable endpoint.
func candidateSpec(f *runtest.Fixture, endpoint, more string) string {
	return fmt.Sprintf(`            candidate:
              endpoint: %q
              mode: shadow
              auth: {secretRef: {name: reconciler-token, namespace: %s, key: token}}
%s`, endpoint, f.NS, more)
}

func dryRunOf(c runtest.Call) bool {
	v, _, _ := unstructured.NestedBool(c.Body, "prepared", "dryRun")
	return v
}

// Shadow mode: the candidate gets every pass's request as a dry run; one that builds a
// different image for one CR is counted once per such pass, logged with the field's path and
// never its value, and nothing it answers reaches the cluster.
func TestRolloutShadowCountsDivergencesAndAppliesNothing(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	const secretish = "registry.example/evil:value-7f3a"
	stable := runtest.NewEndpoint(t, runtest.OKWithChildren)
	cand := runtest.NewEndpoint(t, func(c runtest.Call) runtest.Response {
		if c.CRName() != "b" {
			return runtest.OKWithChildren(c)
		}
		name := c.CRName()
		return runtest.JSONResponse(map[string]any{
			"result": "ok",
			"status": map[string]any{"phase": "Ready", "seenTrigger": c.Trigger},
			"resources": []any{
				map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": secretish, "replicas": 2, "port": 8080}},
				map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
			},
		})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(), Extra: candidateSpec(f, cand.URL(), "")})
	recDir := t.TempDir()
	rec, err := exchange.NewRecorder(recDir, exchange.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng := f.Start(set, nil, func(o *run.Options) {
		o.RolloutInterval = 100 * time.Millisecond
		o.Record = rec.Record
		o.DebugDecisions = true
	})
	f.CreateCR("a", map[string]any{"replicas": 2})
	f.CreateCR("b", map[string]any{"replicas": 2})
	f.WaitReady("a", "True")
	f.WaitReady("b", "True")

	// Every candidate call is counted once it is judged; the count of divergences is exactly
	// the calls for b.
	settled := func() (bool, error) {
		calls := cand.Recorded()
		return len(calls) > 0 && runtest.CounterSum(t, f.Metrics, "ork_candidate_calls_total", "crd", "app") == float64(len(calls)), nil
	}
	f.Eventually("every candidate call judged", settled)
	rv := func() string {
		d, err := f.Get(runtest.Deployments, "b")
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "nginx:1.27" {
			t.Errorf("deployment b has image %v, want the stable reconciler's nginx:1.27", img)
		}
		return d.GetResourceVersion()
	}
	before := rv()
	// One more pass of b: its shadow call diverges again, and is not applied.
	seen := len(cand.Recorded())
	f.PatchSpec("b", `{"spec":{"replicas":2,"touch":"1"}}`)
	f.Eventually("a new candidate call for b", func() (bool, error) { return len(cand.Recorded()) > seen, nil })
	f.Eventually("every candidate call judged", settled)
	if after := rv(); after != before {
		t.Errorf("deployment b changed (resourceVersion %s -> %s) although only the candidate answered differently", before, after)
	}

	var forB int
	for _, c := range cand.Recorded() {
		if !dryRunOf(c) {
			t.Errorf("a candidate request without prepared.dryRun: %s", c.Raw)
		}
		if c.CRName() == "b" {
			forB++
		}
	}
	for _, c := range stable.Recorded() {
		if dryRunOf(c) {
			t.Errorf("a stable request with prepared.dryRun: %s", c.Raw)
		}
	}
	if got := runtest.CounterSum(t, f.Metrics, "ork_candidate_divergence_total", "crd", "app"); got != float64(forB) || forB < 2 {
		t.Errorf("ork_candidate_divergence_total = %v, want %d (the candidate calls for b, at least 2)", got, forB)
	}
	// ork trace keeps each shadow comparison of b, its paths and never the value.
	tr, err := trace.Client{Base: eng.HealthAddr()}.Get(t.Context(), trace.Key{CRD: "app", Namespace: f.NS, Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	var shadows int
	for _, d := range tr.Decisions {
		if d.Side == "shadow" {
			shadows++
			if !slices.ContainsFunc(d.Divergences, func(p string) bool { return strings.HasSuffix(p, ".image") }) {
				t.Errorf("shadow decision of b names %v, want the image's path", d.Divergences)
			}
		}
	}
	if raw, _ := json.Marshal(tr); shadows == 0 || strings.Contains(string(raw), secretish) {
		t.Errorf("b's trace has %d shadow decisions (want at least 1) or the diverging value: %s", shadows, raw)
	}
	logs := f.Logs.String()
	if strings.Contains(logs, secretish) || strings.Contains(logs, "value-7f3a") {
		t.Errorf("ork logged the candidate's value:\n%s", logs)
	}
	path := fmt.Sprintf("objects[apps/v1 Deployment %s/b].spec.template.spec.containers[0].image", f.NS)
	var lines []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "the candidate's answer differs") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], path) || !strings.Contains(lines[0], "key="+f.NS+"/b") {
		t.Errorf("divergence log lines = %q; want one, for %s/b, naming %s", lines, f.NS, path)
	}

	// The state ConfigMap carries the same count and the paths, for ork rollout status.
	var state rollout.State
	f.Eventually("the rollout state written", func() (bool, error) {
		cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "orkestra-rollout", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if state, err = rollout.Decode(cm.Data["app"]); err != nil {
			return false, err
		}
		return state.Window.Samples == len(cand.Recorded()), nil
	})
	if state.Phase != rollout.Shadowing || state.Window.Divergences != forB || state.Window.Compared != state.Window.Samples {
		t.Errorf("state %+v; want Shadowing with %d divergences over every sample compared", state, forB)
	}
	if n := len(state.Divergences); n != forB || state.Divergences[n-1].CR != f.NS+"/b" || len(state.Divergences[n-1].Paths) != 1 || state.Divergences[n-1].Paths[0] != path {
		t.Errorf("recent divergences %+v; want %d, each for b at %s", state.Divergences, forB, path)
	}

	// Offline, over what ork recorded of the stable calls, the candidate diverges the same way.
	token := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "reconciler-token", "namespace": f.NS}, "stringData": map[string]any{"token": runtest.TestToken}}}
	rep, err := replaydiff.Run(t.Context(), set.CRDs[0], replaydiff.Options{Dir: recDir, Secrets: manifest.NewSecrets("test", token)})
	if err != nil {
		t.Fatal(err)
	}
	diverged := map[string][]string{}
	for _, r := range rep.Results {
		if len(r.Divergences) > 0 {
			diverged[r.Key] = r.Divergences
		}
	}
	if rep.Exchanges != len(stable.Recorded()) || len(diverged) != 1 || len(diverged[f.NS+"/b"]) != 1 || diverged[f.NS+"/b"][0] != path {
		t.Errorf("offline: %d exchanges (%d stable calls), divergences %v; want b's alone, at %s", rep.Exchanges, len(stable.Recorded()), diverged, path)
	}
}

// A candidate that hangs, or answers 500, never delays the stable passes: each ends well
// within 2 s (the reconciler answers at once; the candidate's timeout is 10 s), the CRs
// converge, and the calls the pool had no room for wait in the backlog, none skipped.
func TestRolloutShadowSlowOrFailingCandidateNeverDelaysStable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		respond func(runtest.Call) runtest.Response
	}{
		{"hangs", func(c runtest.Call) runtest.Response {
			select {
			case <-c.Ctx.Done():
			case <-time.After(10 * time.Second):
			}
			return runtest.OKWithChildren(c)
		}},
		{"500", func(runtest.Call) runtest.Response {
			return runtest.Response{Status: http.StatusInternalServerError, Body: []byte("boom")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := runtest.NewFixture(t, env)
			stable := runtest.NewEndpoint(t, runtest.OKWithChildren)
			cand := runtest.NewEndpoint(t, tc.respond)
			set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(),
				Extra: candidateSpec(f, cand.URL(), "              timeout: 10s\n              concurrency: 1\n")})
			f.Start(set, nil)
			const n = 6
			for i := range n {
				f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{"replicas": 2})
			}
			// Bound: 6 CRs on 2 workers against a reconciler that answers at once converge in
			// well under a second; 10 s is far below what six hung calls in a row would take.
			f.EventuallyWithin(10*time.Second, "every CR ready", func() (bool, error) {
				for i := range n {
					if c := runtest.ReadyCondition(f.GetCR(fmt.Sprintf("cr-%d", i))); c["status"] != "True" {
						return false, nil
					}
				}
				return true, nil
			})
			// One gather for both counts: a pass that ends between two gathers would count
			// in one and not the other.
			within, total := histogramWithin(t, f.Metrics, "ork_reconcile_duration_seconds", 2.56)
			if total == 0 || within != total {
				t.Errorf("%d of %d stable passes ended within 2.56 s; want all", within, total)
			}
			switch tc.name {
			case "hangs":
				if got := runtest.CounterSum(t, f.Metrics, "ork_candidate_skipped_total", "crd", "app"); got != 0 {
					t.Errorf("ork_candidate_skipped_total = %v; with concurrency 1 and a hung call, the later passes wait in the backlog", got)
				}
			case "500":
				f.Eventually("the candidate's errors counted", func() (bool, error) {
					return runtest.CounterSum(t, f.Metrics, "ork_candidate_errors_total", "crd", "app") >= 1, nil
				})
			}
			// The stable calls are those of a run without a candidate: one per CR
			// (TestOwnWritesCostNoCall), checked after the candidate's outcome was counted.
			if got := len(stable.Recorded()); got != n {
				t.Errorf("%d stable calls for %d CRs; want one each, as without a candidate", got, n)
			}
		})
	}
}

// histogramWithin is how many observations of a histogram (every series) were at most
// bound, one of its bucket bounds, and how many there were in all, read from one gather.
func histogramWithin(t *testing.T, m *run.Metrics, name string, bound float64) (within, total uint64) {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, metric := range fam.GetMetric() {
			total += metric.GetHistogram().GetSampleCount()
			for _, b := range metric.GetHistogram().GetBucket() {
				if b.GetUpperBound() == bound {
					within += b.GetCumulativeCount()
				}
			}
		}
	}
	return within, total
}

// Under the RBAC of `ork rbac gen` alone, a shadowing ork reads and writes its rollout
// state: the ConfigMap <name>-rollout is created and updated, and nothing is forbidden.
func TestRolloutStateUnderGeneratedRBAC(t *testing.T) {
	t.Parallel()
	f := runtest.NewFixture(t, env)
	stable := runtest.NewEndpoint(t, runtest.OKWithChildren)
	cand := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(), Extra: candidateSpec(f, cand.URL(), "")})
	name := "ork-rollout"
	f.GrantGeneratedRBAC(set, name)
	f.Start(set, env.ServiceAccountConfig(f.NS, name), func(o *run.Options) {
		o.Name = name
		o.RolloutInterval = 100 * time.Millisecond
	})
	f.CreateCR("a", map[string]any{"replicas": 2})
	f.WaitReady("a", "True")
	f.Eventually("the state with the candidate's sample", func() (bool, error) {
		cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), name+"-rollout", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		s, err := rollout.Decode(cm.Data["app"])
		return err == nil && s.Window.Samples >= 1, err
	})
	if strings.Contains(strings.ToLower(f.Logs.String()), "forbidden") {
		t.Errorf("ork logged a forbidden error under the generated role:\n%s", f.Logs.String())
	}
}

// Deletes are not shadowed unless shadowDeletes: a reconciler may clean up outside the
// cluster whatever dryRun says. With shadowDeletes the candidate gets the delete as a dry
// run, which bounds how long the other case waits for one that must not come.
func TestRolloutShadowDeletesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		shadowDeletes bool
	}{{"off", false}, {"on", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := runtest.NewFixture(t, env)
			stable := runtest.NewEndpoint(t, runtest.OKWithChildren)
			cand := runtest.NewEndpoint(t, runtest.OKWithChildren)
			more := ""
			if tc.shadowDeletes {
				more = "              shadowDeletes: true\n"
			}
			f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: stable.URL(), Extra: candidateSpec(f, cand.URL(), more)}), nil)
			f.CreateCR("web", map[string]any{"replicas": 1})
			f.WaitReady("web", "True")
			if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			stable.NextMatching(t, "the stable delete", runtest.Deleting)
			shadowed := func() bool {
				for _, c := range cand.Recorded() {
					if runtest.Deleting(c) {
						if !dryRunOf(c) {
							t.Errorf("a shadowed delete without prepared.dryRun: %s", c.Raw)
						}
						return true
					}
				}
				return false
			}
			if tc.shadowDeletes {
				f.Eventually("the shadowed delete", func() (bool, error) { return shadowed(), nil })
				return
			}
			// Slack: the shadow call leaves within the stable pass and reaches this loopback
			// server in milliseconds (the "on" case sees it well within this bound).
			quiet := time.After(2 * time.Second)
			for {
				select {
				case c := <-cand.Arrived():
					if runtest.Deleting(c) {
						t.Fatal("the delete was shadowed without shadowDeletes")
					}
				case <-quiet:
					return
				}
			}
		})
	}
}
