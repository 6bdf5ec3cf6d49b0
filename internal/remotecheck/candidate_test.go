package remotecheck

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// With a candidate, every request goes to it too and its answer is compared as ork run's
// shadow mode does: the differing paths, never the values; the check's verdict is the
// checked reconciler's alone.
func TestCandidateDivergencesArePathsOnly(t *testing.T) {
	stable := httptest.NewServer(reconciler(nil))
	t.Cleanup(stable.Close)
	cand := httptest.NewServer(reconciler(func(req, a map[string]any) {
		if p, _ := req["prepared"].(map[string]any); p["trigger"] != "create" {
			return // only the create answer differs
		}
		a["status"] = map[string]any{"phase": "s3cret-ish"}
		a["resources"].([]any)[0].(map[string]any)["fields"].(map[string]any)["replicas"] = 3
	}))
	t.Cleanup(cand.Close)
	set, opts := example(t)
	opts.Endpoint, opts.Candidate = stable.URL, "http://user:pw@"+strings.TrimPrefix(cand.URL, "http://")+"?k=v"
	rep, err := Run(t.Context(), set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Conformant || rep.Divergences != 2 || strings.Contains(rep.Candidate, "pw") || strings.Contains(rep.Candidate, "k=v") {
		t.Fatalf("conformant %v, divergences %d, candidate %q", rep.Conformant, rep.Divergences, rep.Candidate)
	}
	for _, r := range rep.Requests {
		c := r.Candidate
		if c == nil || c.Status != http.StatusOK || c.Reason != "ReconcileSucceeded" {
			t.Fatalf("%s: candidate answer %+v", r.Name, c)
		}
		var want []string
		if r.Trigger == "create" { // both rounds

			want = []string{"objects[apps/v1 Deployment default/my-webapp].spec.replicas", "status.phase"}
		}
		if d := cmp.Diff(want, c.Divergences, cmpEmpty); d != "" {
			t.Errorf("%s: divergences (-want +got):\n%s", r.Name, d)
		}
		for _, p := range c.Divergences {
			if strings.Contains(p, "s3cret") {
				t.Errorf("a path carries a value: %s", p)
			}
		}
	}

	// A failing candidate fails nothing of the check; its reason is reported.
	broken := httptest.NewServer(raw(http.StatusInternalServerError, "boom"))
	t.Cleanup(broken.Close)
	opts.Candidate = broken.URL
	if rep, err = Run(t.Context(), set, opts); err != nil || !rep.Conformant || rep.Requests[0].Candidate.Reason != "RemoteHTTPError" {
		t.Fatalf("broken candidate: %v conformant %v %+v", err, rep.Conformant, rep.Requests[0].Candidate)
	}
}

// cmpEmpty treats nil and empty path lists alike.
var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())
