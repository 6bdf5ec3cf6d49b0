package run_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/run/runtest"
)

// configMapAnswer answers with one ConfigMap "cfg" holding data.
func configMapAnswer(data map[string]any) response {
	return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg"}, "data": data},
	}})
}

// orkEntries are the managedFields entries of field manager orkestra, by operation.
func orkEntries(u *unstructured.Unstructured) map[metav1.ManagedFieldsOperationType]int {
	out := map[metav1.ManagedFieldsOperationType]int{}
	for _, m := range u.GetManagedFields() {
		if m.Manager == "orkestra" && m.Subresource == "" {
			out[m.Operation]++
		}
	}
	return out
}

// A new child is created (a POST: its fields are orkestra's Update entry); the next apply
// takes them over, so that no field stays owned twice and a field the reconciler drops
// from a later answer is removed from the object.
func TestCreatedChildIsHandedOverToApply(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.Trigger == "create" {
			return configMapAnswer(map[string]any{"a": "1", "b": "2"})
		}
		return configMapAnswer(map[string]any{"a": "1"}) // b dropped
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}}), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	cm, err := f.Get(runtest.ConfigMaps, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	if got := orkEntries(cm); got[metav1.ManagedFieldsOperationUpdate] != 1 || got[metav1.ManagedFieldsOperationApply] != 0 {
		t.Fatalf("after the first pass: orkestra entries %v, want the create's one Update entry", got)
	}
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	f.Eventually("data.b removed", func() (bool, error) {
		cm, err = f.Get(runtest.ConfigMaps, "cfg")
		if err != nil {
			return false, err
		}
		_, has := cm.Object["data"].(map[string]any)["b"]
		return !has, nil
	})
	if got := orkEntries(cm); got[metav1.ManagedFieldsOperationUpdate] != 0 || got[metav1.ManagedFieldsOperationApply] != 1 {
		t.Errorf("after the hand-over: orkestra entries %v, want one Apply entry and no Update entry", got)
	}
	if v := cm.Object["data"].(map[string]any)["a"]; v != "1" {
		t.Errorf("data.a = %v, want 1", v)
	}
}

// requestCounter counts the requests ork sends, by method and path.
type requestCounter struct {
	mu   sync.Mutex
	seen []string // "METHOD path?query"
}

func (r *requestCounter) config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			r.mu.Lock()
			r.seen = append(r.seen, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
			r.mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	return out
}

func (r *requestCounter) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = nil
}

// matching lists the requests whose method is in methods and whose path has prefix.
func (r *requestCounter) matching(prefix string, methods ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.seen {
		m, rest, _ := strings.Cut(s, " ")
		if slices.Contains(methods, m) && strings.HasPrefix(rest, prefix) {
			out = append(out, s)
		}
	}
	return out
}

var mutating = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// A new child costs one request: a create, and no read first.
func TestNewChildCostsOneMutatingRequestAndNoRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	var rc requestCounter
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), rc.config(env.Config))
	rc.reset() // the start's lists and preflight are not the CR's
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	for _, kind := range []string{"/apis/apps/v1/namespaces/" + f.NS + "/deployments", "/api/v1/namespaces/" + f.NS + "/services"} {
		if got := rc.matching(kind, mutating...); len(got) != 1 || !strings.HasPrefix(got[0], "POST ") {
			t.Errorf("mutating requests on %s: %v, want one create", kind, got)
		}
		if got := rc.matching(kind+"/", http.MethodGet); len(got) != 0 {
			t.Errorf("reads of one object under %s: %v, want none", kind, got)
		}
	}
}

// Two CRs of two engines (two CRDs, the same apiserver) answering one absent child at the
// same moment cannot both win: one creates it, the other's create fails and, read and
// judged, ends in AlreadyOwned. An apply-create would have let the second move the
// controller.
func TestTwoEnginesCreatingTheSameChildOneWins(t *testing.T) {
	t.Parallel()
	f1, f2 := newFixtureID(t, t.Name()+"-1"), newFixtureID(t, t.Name()+"-2")
	f2.NS = f1.NS // one child name in one namespace; the token Secret is f1's
	var mu sync.Mutex
	arrived := 0
	both := make(chan struct{})
	ep := runtest.NewEndpoint(t, func(c call) response {
		mu.Lock()
		if arrived++; arrived == 2 {
			close(both)
		}
		mu.Unlock()
		select { // hold each first call until both engines' are in flight
		case <-both:
		case <-c.Ctx.Done():
		}
		return sharedChild(c)
	})
	f1.Start(f1.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f2.Start(f2.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f1.CreateCR("a", map[string]any{})
	f2.CreateCR("b", map[string]any{})
	var winners, losers []string
	for _, fx := range []*fixture{f1, f2} {
		for _, name := range []string{"a", "b"} {
			if _, err := fx.CRs().Get(t.Context(), name, metav1.GetOptions{}); err != nil {
				continue
			}
			fx.Eventually("a Ready condition on "+name, func() (bool, error) { return runtest.ReadyCondition(fx.GetCR(name)) != nil, nil })
			c := runtest.ReadyCondition(fx.GetCR(name))
			if c["status"] == "True" {
				winners = append(winners, name)
			} else if msg, _ := c["message"].(string); strings.HasPrefix(msg, "AlreadyOwned") {
				losers = append(losers, name)
			} else {
				t.Errorf("%s: Ready %v, want True or AlreadyOwned", name, c)
			}
		}
	}
	if len(winners) != 1 || len(losers) != 1 {
		t.Fatalf("winners %v, losers %v: want exactly one of each", winners, losers)
	}
	ref, dep := f1.controllerOf(runtest.Deployments, "shared")
	if ref == nil || ref.Name != winners[0] {
		t.Errorf("deployment shared is controlled by %+v, want %s", ref, winners[0])
	}
	if img := image(dep); img != "img-"+winners[0] {
		t.Errorf("deployment shared has image %q, want the winner's img-%s", img, winners[0])
	}
}
