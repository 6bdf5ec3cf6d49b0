package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/trace"
)

// With --debug-decisions every reconcile is kept with its trigger, answer and what applying
// each child did, served for `ork trace`; with --record each call is a file. Neither holds
// the auth token.
func TestDecisionTraceAndRecordingOfARun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	dir := t.TempDir()
	rec, err := exchange.NewRecorder(dir, exchange.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng := f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil, func(o *run.Options) {
		o.DebugDecisions, o.Record = true, rec.Record
	})
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	f.Eventually("observedGeneration 2", func() (bool, error) {
		g, _, _ := unstructured.NestedInt64(f.GetCR("web").Object, "status", "observedGeneration")
		return g == 2, nil
	})
	key := trace.Key{CRD: "app", Namespace: f.NS, Name: "web"}
	var got trace.ObjectTrace
	f.Eventually("two decisions", func() (bool, error) {
		got, err = trace.Client{Base: eng.HealthAddr()}.Get(t.Context(), key)
		return err == nil && len(got.Decisions) >= 2, err
	})
	first, second := got.Decisions[0], got.Decisions[1]
	if first.Trigger != "create" || !first.Success || first.Result != "ok" || first.Request == "" || first.Next != "done" {
		t.Errorf("first decision = %+v, want a successful create with the request's digest", first)
	}
	outcomes := map[string]string{}
	for _, a := range first.Applies {
		outcomes[a.Ref] = a.Outcome
	}
	if outcomes["deployments/web"] != trace.Created || outcomes["services/web-svc"] != trace.Created {
		t.Errorf("first decision applies = %+v, want both children created", first.Applies)
	}
	if second.Trigger != "update" {
		t.Errorf("second decision trigger = %q, want update", second.Trigger)
	}
	raw, _ := json.Marshal(got)
	if strings.Contains(string(raw), runtest.TestToken) {
		t.Errorf("the decision trace holds the auth token: %s", raw)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 2 {
		t.Fatalf("%d recorded exchanges, want one per call (at least 2)", len(files))
	}
	for _, p := range files {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), runtest.TestToken) {
			t.Errorf("%s holds the auth token", p)
		}
	}
}
