package run_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// withEnvAndConfig answers a Deployment with containers, a port, env and a label of the
// reconciler's own, and a ConfigMap of two keys: the fields a drift can remove.
func withEnvAndConfig(c runtest.Call) runtest.Response {
	name := c.CRName()
	return runtest.JSONResponse(map[string]any{
		"result": "ok",
		"status": map[string]any{"phase": "Ready"},
		"resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": "nginx:1.27", "replicas": 2,
				"port": 8080, "env": map[string]any{"MODE": "prod", "LEVEL": "info"}, "labels": map[string]any{"team": "a"}}},
			map[string]any{"type": "configmap", "fields": map[string]any{"name": name + "-cfg", "data": map[string]any{"a": "1", "b": "2"}}},
		},
	})
}

// driftSpec is the Katalog withEnvAndConfig's children need.
func driftSpec(ep *endpoint) runtest.RemoteSpec {
	return runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"apps/deployments", "/configmaps"}}
}

// drift is an edit that takes a field from ork without moving ork's managedFields time, and
// what ork's repair looks like.
type drift struct {
	name     string
	gvr      schema.GroupVersionResource
	child    func(cr string) string
	edit     func(f *fixture, name string)
	repaired func(u *unstructured.Unstructured) bool
}

func (f *fixture) patchChild(gvr schema.GroupVersionResource, name string, pt types.PatchType, patch, manager string, subresource ...string) {
	f.T.Helper()
	if _, err := f.Dyn.Resource(gvr).Namespace(f.NS).Patch(f.T.Context(), name, pt, []byte(patch),
		metav1.PatchOptions{FieldManager: manager}, subresource...); err != nil {
		f.T.Fatal(err)
	}
}

var drifts = []drift{{
	name:  "a ConfigMap key removed by JSON patch",
	gvr:   runtest.ConfigMaps,
	child: func(cr string) string { return cr + "-cfg" },
	edit: func(f *fixture, name string) {
		f.patchChild(runtest.ConfigMaps, name, types.JSONPatchType, `[{"op":"remove","path":"/data/a"}]`, "kubectl-patch")
	},
	repaired: func(u *unstructured.Unstructured) bool {
		v, _, _ := unstructured.NestedString(u.Object, "data", "a")
		return v == "1"
	},
}, {
	name:  "a label removed (kubectl label team-)",
	gvr:   runtest.Deployments,
	child: func(cr string) string { return cr },
	edit: func(f *fixture, name string) {
		f.patchChild(runtest.Deployments, name, types.MergePatchType, `{"metadata":{"labels":{"team":null}}}`, "kubectl-label")
	},
	repaired: func(u *unstructured.Unstructured) bool { return u.GetLabels()["team"] == "a" },
}, {
	name:  "an env item removed",
	gvr:   runtest.Deployments,
	child: func(cr string) string { return cr },
	edit: func(f *fixture, name string) {
		// The env list is ordered by name: LEVEL, then MODE.
		f.patchChild(runtest.Deployments, name, types.JSONPatchType,
			`[{"op":"test","path":"/spec/template/spec/containers/0/env/0/name","value":"LEVEL"},{"op":"remove","path":"/spec/template/spec/containers/0/env/0"}]`, "kubectl-patch")
	},
	repaired: func(u *unstructured.Unstructured) bool {
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		env, _ := cs[0].(map[string]any)["env"].([]any)
		return len(env) == 2
	},
}, {
	name:  "kubectl scale",
	gvr:   runtest.Deployments,
	child: func(cr string) string { return cr },
	edit: func(f *fixture, name string) {
		f.patchChild(runtest.Deployments, name, types.MergePatchType, `{"spec":{"replicas":5}}`, "kubectl", "scale")
	},
	repaired: replicasAre(2),
}, {
	name:  "the managed-by label removed",
	gvr:   runtest.Deployments,
	child: func(cr string) string { return cr },
	edit: func(f *fixture, name string) {
		f.patchChild(runtest.Deployments, name, types.MergePatchType,
			fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, run.ManagedByLabel), "kubectl-label")
	},
	repaired: func(u *unstructured.Unstructured) bool {
		return u.GetLabels()[run.ManagedByLabel] == run.ManagedByValue
	},
}}

func replicasAre(n int64) func(u *unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return r == n
	}
}

// Drift is repaired whatever the edit, while ork runs and when it happened while ork was
// stopped: removals and scale-subresource writes leave ork's managedFields time as it was,
// but take the fields out of ork's entry.
func TestDriftIsRepaired(t *testing.T) {
	t.Parallel()
	for _, d := range drifts {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ep := runtest.NewEndpoint(t, withEnvAndConfig)
			set := f.WriteKatalog(driftSpec(ep))
			stop := f.runEngine(set, nil)
			f.CreateCR("web", map[string]any{})
			f.WaitReady("web", "True")
			f.waitPassesDone(ep)
			child := d.child("web")
			f.waitChild(d.gvr, child, "converged", d.repaired)

			d.edit(f, child)
			f.waitChild(d.gvr, child, "repaired while ork runs", d.repaired)
			f.waitPassesDone(ep)
			stop()

			d.edit(f, child)
			if u, err := f.Get(d.gvr, child); err != nil || d.repaired(u) {
				t.Fatalf("the edit while ork is stopped did not take (%v): the test would not test the restart", err)
			}
			f.runEngine(set, nil)
			f.waitChild(d.gvr, child, "repaired after the restart", d.repaired)
		})
	}
}

// A child whose selected label was removed left ork's cache; once repaired it is back in it:
// a later edit of it is repaired, and its deletion re-creates it.
func TestChildWithoutItsLabelIsFoundAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, withEnvAndConfig)
	f.runEngine(f.WriteKatalog(driftSpec(ep)), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.waitPassesDone(ep)
	label := drifts[len(drifts)-1]
	label.edit(f, "web")
	f.waitChild(runtest.Deployments, "web", "the label restored", label.repaired)

	f.editChild(runtest.Deployments, "web", `{"spec":{"replicas":5}}`)
	f.waitChild(runtest.Deployments, "web", "a later edit repaired", replicasAre(2))

	old, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Dyn.Resource(runtest.Deployments).Namespace(f.NS).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitChild(runtest.Deployments, "web", "re-created after its deletion", func(u *unstructured.Unstructured) bool {
		return u.GetUID() != old.GetUID()
	})
}

// waitChild waits until the child exists and ok says yes.
func (f *fixture) waitChild(gvr schema.GroupVersionResource, name, what string, ok func(*unstructured.Unstructured) bool) {
	f.T.Helper()
	f.Eventually(gvr.Resource+"/"+name+" "+what, func() (bool, error) {
		u, err := f.Get(gvr, name)
		if err != nil {
			return false, nil
		}
		return ok(u), nil
	})
}
