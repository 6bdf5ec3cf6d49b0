package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// Upgrading to an ork that labels children with its operator's name: a child an older ork
// wrote (managed-by only) is not in the new child cache, which selects on the operator
// label; the apply reads it live, takes it as the CR's own, and adds the label, after
// which the cache shows it and its changes trigger the owner again. A child labelled for
// another operator is never cached: its changes trigger nothing, though it names the same
// CR as controller.
func TestOperatorLabelUpgradeAndCacheSelector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{configMapEntry("web-cm", nil)}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps, Extra: pruneOn})

	// Before the new ork starts: the CR, and its child as an older ork applied it (field
	// manager orkestra, managed-by, the controller reference, no operator label).
	web := f.CreateCR("web", map[string]any{})
	owner := metav1.OwnerReference{APIVersion: f.Group + "/v1", Kind: "App", Name: "web", UID: web.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	old, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web-cm", "namespace": f.NS,
			"labels":          map[string]any{run.ManagedByLabel: run.ManagedByValue},
			"ownerReferences": []any{owner}},
		"data": map[string]any{"written-by": "old-ork"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Patch(t.Context(), "web-cm", types.ApplyPatchType, old,
		metav1.PatchOptions{FieldManager: run.FieldManager, Force: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	// An older ork's child the reconciler no longer returns: labelled at start like the
	// others, so prune removes it as it would any child (docs/naming.md says so).
	f.createConfigMap("web-stale", map[string]string{run.ManagedByLabel: run.ManagedByValue}, owner)
	// Another operator's child, naming the same CR as controller (as no real one would):
	// only the label keeps it out of this operator's cache.
	f.createConfigMap("team-b-cm", map[string]string{run.ManagedByLabel: run.ManagedByValue, run.OperatorLabel: "team-b"}, owner)

	f.Start(set, nil, func(o *run.Options) { o.Name = "team-a" })
	f.WaitReady("web", "True")
	f.Eventually("the old child labelled for team-a", func() (bool, error) {
		cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "web-cm", getOpts)
		if err != nil {
			return false, err
		}
		return cm.Labels[run.OperatorLabel] == "team-a" && len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == web.GetUID(), nil
	})
	if lease, err := env.Clientset.CoordinationV1().Leases(f.NS).Get(t.Context(), "team-a", getOpts); err == nil {
		t.Errorf("a Lease %s exists without --leader-elect", lease.Name)
	}
	f.waitPassesDone(ep)
	before := f.triggers("child")

	// The other operator's child changes first, then this one's. Events of one type arrive
	// in order on one informer: once the second has triggered a call, the first would have
	// been handled too, had the cache held it.
	f.editChild(runtest.ConfigMaps, "team-b-cm", `{"data":{"k":"edited"}}`)
	f.editChild(runtest.ConfigMaps, "web-cm", `{"metadata":{"labels":{"team":"a"}}}`)
	ep.NextMatching(t, "a call after the edit of web-cm", func(c call) bool { return c.CRName() == "web" && c.Trigger == "resync" })
	f.waitPassesDone(ep)
	if got := f.triggers("child") - before; got != 1 {
		t.Errorf("%v child triggers, want 1: the edit of web-cm (team-b-cm is another operator's, never cached)", got)
	}
	f.Eventually("the older ork's child the reconciler no longer returns pruned", func() (bool, error) {
		return !f.exists("web-stale"), nil
	})
	cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "team-b-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[run.OperatorLabel] != "team-b" || cm.Data["k"] != "edited" {
		t.Errorf("team-a's ork changed team-b's child: %v %v", cm.Labels, cm.Data)
	}
}

// The Lease defaults to the operator's name; --lease-name still overrides it.
func TestLeaseNamedAfterTheOperator(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, lease, want string
	}{
		{"default", "", "team-a"},
		{"override", "my-lease", "my-lease"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
			f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil, func(o *run.Options) {
				o.Name, o.LeaseName, o.LeaderElect = "team-a", tt.lease, true
			})
			f.Eventually("the Lease "+tt.want, func() (bool, error) {
				_, err := env.Clientset.CoordinationV1().Leases(f.NS).Get(context.Background(), tt.want, getOpts)
				return err == nil, nil
			})
		})
	}
}

// An onCreate child an older ork created (never written again by design) gets the operator
// label, and only that: the cache must see it, or its deletion would go unheard.
func TestOnCreateChildOfAnOlderOrkGetsTheLabel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set := f.writeDeclarativeOnCreateConfigMap("seed")
	web := f.CreateCR("web", map[string]any{})
	f.createConfigMap("seed", map[string]string{run.ManagedByLabel: run.ManagedByValue}, metav1.OwnerReference{
		APIVersion: f.Group + "/v1", Kind: "App", Name: "web", UID: web.GetUID(), Controller: ptr.To(true)})
	f.Start(set, nil, func(o *run.Options) { o.Name = "team-a" })
	var cm *corev1.ConfigMap
	f.Eventually("the onCreate child labelled", func() (bool, error) {
		var err error
		cm, err = env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "seed", getOpts)
		return err == nil && cm.Labels[run.OperatorLabel] == "team-a", err
	})
	if cm.Data["k"] != "v" {
		t.Errorf("the onCreate child was rewritten: %v", cm.Data)
	}
	// Now cached: deleting it is heard, and the child is created again.
	if err := env.Clientset.CoreV1().ConfigMaps(f.NS).Delete(t.Context(), "seed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the onCreate child created again", func() (bool, error) {
		cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "seed", getOpts)
		return err == nil && cm.UID != "" && cm.Data["k"] == "from-katalog", nil
	})
}

// writeDeclarativeOnCreateConfigMap writes a declarative Katalog whose only child is the
// onCreate ConfigMap name, data k: from-katalog.
func (f *fixture) writeDeclarativeOnCreateConfigMap(name string) *katalog.Set {
	f.T.Helper()
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: operator-e2e}
spec:
  crds:
    app:
      apiTypes: {group: %s, version: v1, kind: App, plural: apps}
      operatorBox:
        reconcile:
          default: true
        onCreate:
          configMaps:
            - name: %s
              data: {k: from-katalog}
`, f.Group, name)
	return f.LoadKatalog(doc)
}

// A child labelled for another operator is never written over: writing this operator's
// name would drop it from the other one's cache, whose re-apply would drop it from this
// one's, once a second for as long as both run. The pass fails with OperatorConflict,
// and the child keeps its label and data.
func TestChildOfAnotherOperatorIsAConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{configMapEntry("shared-cm", nil)}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps})
	f.createConfigMap("shared-cm", map[string]string{run.ManagedByLabel: run.ManagedByValue, run.OperatorLabel: "team-b"})
	before, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "shared-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(set, nil, func(o *run.Options) { o.Name = "team-a" })
	f.CreateCR("web", map[string]any{})
	got := f.WaitReady("web", "False")
	if msg, _ := runtest.ReadyCondition(got)["message"].(string); !strings.HasPrefix(msg, "OperatorConflict") || !strings.Contains(msg, "team-b") {
		t.Errorf("Ready message = %q, want OperatorConflict naming team-b", msg)
	}
	after, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "shared-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || after.Labels[run.OperatorLabel] != "team-b" {
		t.Errorf("team-a's ork wrote team-b's child: labels %v, resourceVersion %s -> %s",
			after.Labels, before.ResourceVersion, after.ResourceVersion)
	}
}

// The children an older ork wrote (no operator label) are labelled before the caches start,
// so the very first call already sees them in prepared.children: a reconciler that creates
// what it does not see (a password Secret) must never be told a child is missing that is
// there. A managed-by object another controller owns is left alone.
func TestOlderOrksChildrenAreInTheFirstCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{configMapEntry("web-cm", nil)}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps,
		Payload: "              children:\n                enabled: true\n"})
	web := f.CreateCR("web", map[string]any{})
	owner := metav1.OwnerReference{APIVersion: f.Group + "/v1", Kind: "App", Name: "web", UID: web.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	f.createConfigMap("web-cm", map[string]string{run.ManagedByLabel: run.ManagedByValue}, owner)
	foreign := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "other", UID: "0000-other",
		Controller: ptr.To(true)}
	f.createConfigMap("foreign-cm", map[string]string{run.ManagedByLabel: run.ManagedByValue}, foreign)

	f.Start(set, nil, func(o *run.Options) { o.Name = "team-a" })
	first := ep.NextMatching(t, "the first call for web", func(c call) bool { return c.CRName() == "web" })
	prepared, _ := first.Body["prepared"].(map[string]any)
	children, _ := prepared["children"].(map[string]any)
	cms, _ := children["configmap"].(map[string]any)
	if _, ok := cms["web-cm"]; !ok {
		t.Errorf("the first call's prepared.children = %v, want the older ork's web-cm in it", children)
	}
	cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "foreign-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Labels[run.OperatorLabel]; ok {
		t.Errorf("another controller's object was labelled: %v", cm.Labels)
	}
}
