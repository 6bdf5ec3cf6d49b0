package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// 10.9 A managed type ork cannot list does not hang start-up for ever: the CRDs whose
// caches synced start working at once, and past --cache-sync-timeout ork fails naming the
// type it could not list.
func TestCacheSyncTimeoutNamesTheType(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.InstallCRD("Widget", "widgets")
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}})
	})
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: sync-e2e}
spec:
  crds:
    app:
      apiTypes: {group: %[1]s, version: v1, kind: App, plural: apps}
      operatorBox:
        reconcile:
          default: false
          remote: {endpoint: %[2]q, managedResources: [{group: "", plural: services}]}
    widget:
      apiTypes: {group: %[1]s, version: v1, kind: Widget, plural: widgets}
      operatorBox:
        reconcile:
          default: false
          remote: {endpoint: %[2]q, managedResources: [{group: apps, plural: deployments}]}
`, f.Group, ep.URL())
	set := f.LoadKatalog(doc)
	// Everything ork needs, except list and watch on services.
	sa := "no-list-services"
	env.Kubectl(t, []byte(fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-%[2]s}
rules:
  - {apiGroups: [%[3]s], resources: [apps, widgets], verbs: [get, list, watch, update, patch]}
  - {apiGroups: [%[3]s], resources: [apps/status, widgets/status], verbs: [get, update, patch]}
  - {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch, create, update, patch, delete]}
  - {apiGroups: [""], resources: [services], verbs: [get]}
  - {apiGroups: [""], resources: [events], verbs: [create, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-%[2]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-%[2]s}
subjects: [{kind: ServiceAccount, name: %[1]s, namespace: %[2]s}]
`, sa, f.NS, f.Group)), "apply", "-f", "-")
	env.WaitAllowed(t, f.NS, sa, authorizationv1.ResourceAttributes{Verb: "list", Group: f.Group, Resource: "widgets"},
		authorizationv1.ResourceAttributes{Verb: "patch", Group: f.Group, Resource: "widgets", Subresource: "status"})

	eng := f.NewEngine(set, env.ServiceAccountConfig(f.NS, sa), func(o *run.Options) {
		o.SkipPreflight, o.CacheSyncTimeout = true, 8*time.Second
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()

	widgets := schema.GroupVersionResource{Group: f.Group, Version: "v1", Resource: "widgets"}
	w := f.Dyn.Resource(widgets).Namespace(f.NS)
	if _, err := w.Create(t.Context(), runtest.ObjectOf(f.Group+"/v1", "Widget", "gadget"), createOpts); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the widget reconciled while services still cannot be listed", func() (bool, error) {
		u, err := w.Get(t.Context(), "gadget", getOpts)
		if err != nil {
			return false, err
		}
		c := runtest.ReadyCondition(u)
		return c != nil && c["status"] == "True", nil
	})
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "services") || !strings.Contains(err.Error(), "sync") {
			t.Errorf("Run returned %v, want a cache sync failure naming services", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ork still waits for the services cache a minute later: --cache-sync-timeout is not honoured")
	}
}
