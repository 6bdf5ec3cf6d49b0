package replaydiff

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
)

// answering serves an ok answer with a Deployment named after the CR; image gives its image.
func answering(t *testing.T, image func(name string) string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"object"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		n := req.Object.Metadata.Name
		_ = json.NewEncoder(w).Encode(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": n, "image": image(n), "replicas": 1}},
		}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// recordingStable is a stable reconciler answering nginx:1.27 whose exchanges are recorded
// into dir.
func recordingStable(t *testing.T) (dir string, stable *katalog.CRD, r *remote.Reconciler, rec *exchange.Recorder) {
	t.Helper()
	dir = t.TempDir()
	rec, err := exchange.NewRecorder(dir, exchange.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stable = crd(answering(t, func(string) string { return "nginx:1.27" }))
	if r, err = remote.New(stable, remote.Options{Record: rec.Record}); err != nil {
		t.Fatal(err)
	}
	return dir, stable, r, rec
}

func crd(endpoint string) *katalog.CRD {
	return &katalog.CRD{Name: "webapp", APITypes: &katalog.APITypes{Group: "myorg.io", Version: "v1", Kind: "WebApp", Plural: "webapps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Remote: &katalog.Remote{Endpoint: endpoint,
			ManagedResources: []katalog.ManagedResource{{Group: "apps", Plural: "deployments"}}}}}}
}

// A recording made against the stable reconciler, sent again to a candidate that builds
// another image for one CR: that CR's exchanges diverge at the image's path, the others
// agree, and no value is reported.
func TestReplayDiff(t *testing.T) {
	dir, stable, r, rec := recordingStable(t)
	for _, name := range []string{"a", "b"} {
		for _, trig := range []remote.Trigger{remote.TriggerCreate, remote.TriggerResync} {
			obj := map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp", "metadata": map[string]any{"name": name, "namespace": "default"}}
			if _, _, err := r.Call(t.Context(), remote.Request{Key: "default/" + name, Object: obj, Trigger: trig, Attempt: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	candidate := answering(t, func(n string) string {
		if n == "b" {
			return "registry.example/s3cret:2"
		}
		return "nginx:1.27"
	})
	rep, err := Run(t.Context(), stable, Options{Dir: dir, Candidate: candidate})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exchanges != 4 || rep.Compared != 4 || rep.Divergences != 2 || rep.Errors != 0 {
		t.Fatalf("report %+v; want 4 exchanges compared, 2 diverging", rep)
	}
	for _, res := range rep.Results {
		var want []string
		if res.Key == "default/b" {
			want = []string{"objects[apps/v1 Deployment default/b].spec.template.spec.containers[0].image"}
		}
		if d := cmp.Diff(want, res.Divergences, cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())); d != "" {
			t.Errorf("%s %s (-want +got):\n%s", res.Key, res.Trigger, d)
		}
		if strings.Contains(strings.Join(res.Divergences, ""), "s3cret") {
			t.Errorf("a path carries a value: %v", res.Divergences)
		}
	}
	if _, err := Run(t.Context(), stable, Options{Dir: t.TempDir(), Candidate: candidate}); err == nil {
		t.Error("an empty directory compared")
	}
}

// A recorded delete goes to the candidate only when asked (shadowDeletes, or IncludeDelete),
// as in live shadow mode: a reconciler may clean up outside the cluster whatever dryRun says.
func TestReplayDiffSendsDeletesOnlyWhenAsked(t *testing.T) {
	dir, stable, r, rec := recordingStable(t)
	obj := map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": "a", "namespace": "default", "deletionTimestamp": "2026-12-01T00:00:00Z"}}
	if _, _, err := r.Call(t.Context(), remote.Request{Key: "default/a", Object: obj, Trigger: remote.TriggerDelete, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	candidate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		_, _ = io.WriteString(w, `{"result":"ok"}`)
	}))
	defer candidate.Close()
	rep, err := Run(t.Context(), stable, Options{Dir: dir, Candidate: candidate.URL})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || rep.SkippedDeletes != 1 || rep.Exchanges != 0 {
		t.Errorf("without shadowDeletes: %d candidate calls, report %+v; want none, the delete skipped", calls.Load(), rep)
	}
	if rep, err = Run(t.Context(), stable, Options{Dir: dir, Candidate: candidate.URL, IncludeDelete: true}); err != nil || calls.Load() != 1 || rep.Exchanges != 1 {
		t.Errorf("with IncludeDelete: %d candidate calls, report %+v, %v; want the delete sent", calls.Load(), rep, err)
	}
}
