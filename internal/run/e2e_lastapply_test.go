package run_test

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run/runtest"
)

// lastApply is the prepared.lastApply of a request; ok is false when it is absent.
func lastApply(t *testing.T, c call) (out []remote.AppliedResource, ok bool) {
	t.Helper()
	var body struct {
		Prepared struct {
			LastApply *[]remote.AppliedResource `json:"lastApply"`
		} `json:"prepared"`
	}
	if err := json.Unmarshal(c.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Prepared.LastApply == nil {
		return nil, false
	}
	return *body.Prepared.LastApply, true
}

func outcomeOf(entries []remote.AppliedResource, name string) remote.AppliedResource {
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	return remote.AppliedResource{}
}

// prepared.lastApply tells the reconciler what applying its previous answer did: a conflict
// with the field manager that owns the field (forceConflict false), and unchanged for an
// object that already was what it asked for.
func TestLastApplyReportsAConflictAndUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other, err := resources.BuildIntent("deployment", map[string]any{"name": "web", "image": "nginx:1.27", "replicas": 3},
		resources.OptionsFor(f.NS, "web"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Dyn.Resource(runtest.Deployments).Namespace(f.NS).Apply(t.Context(), "web", other.Obj,
		metav1.ApplyOptions{FieldManager: "someone-else", Force: true}); err != nil {
		t.Fatal(err)
	}
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			configMapEntry("cfg", nil),
			map[string]any{"type": "deployment", "forceConflict": false,
				"fields": map[string]any{"name": "web", "image": "nginx:1.27", "replicas": 2}},
		}})
	})
	payload := "              lastApply: true\n"
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps, Payload: payload}), nil)
	f.CreateCR("web", map[string]any{})

	first := ep.Next(t)
	if got, ok := lastApply(t, first); ok {
		t.Errorf("the first request carries lastApply %+v, want none (nothing applied yet)", got)
	}
	// The conflict fails the pass, so ork asks again with what happened.
	second := ep.NextMatching(t, "with a lastApply", func(c call) bool { _, ok := lastApply(t, c); return ok })
	got, _ := lastApply(t, second)
	if cfg := outcomeOf(got, "cfg"); cfg.Outcome != remote.OutcomeApplied || cfg.Type != "configmap" || cfg.Namespace != f.NS {
		t.Errorf("cfg: %+v, want a configmap in %s, applied", cfg, f.NS)
	}
	web := outcomeOf(got, "web")
	if web.Outcome != remote.OutcomeConflict || !slices.Equal(web.ConflictingManagers, []string{"someone-else"}) || web.Message == "" {
		t.Errorf("web: %+v, want a conflict with someone-else, with a message", web)
	}
	if len(got) != 2 || got[0].Name != "cfg" {
		t.Errorf("lastApply %+v, want the two resources in the answer's order", got)
	}
	third := ep.NextMatching(t, "after a second apply", func(c call) bool {
		la, _ := lastApply(t, c)
		return outcomeOf(la, "cfg").Outcome == remote.OutcomeUnchanged
	})
	if web := outcomeOf(mustLastApply(t, third), "web"); web.Outcome != remote.OutcomeConflict {
		t.Errorf("web after the second apply: %+v, want the conflict again", web)
	}
}

func mustLastApply(t *testing.T, c call) []remote.AppliedResource {
	t.Helper()
	la, ok := lastApply(t, c)
	if !ok {
		t.Fatal("no lastApply")
	}
	return la
}
