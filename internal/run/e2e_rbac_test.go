package run_test

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/rbacgen"
)

// 14. The happy path once more, with ork running as the ServiceAccount of `ork rbac gen`'s
// output: the preflight passes and nothing is forbidden.
func TestHappyPathUnderGeneratedRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	set := f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, payload: `              children:
                enabled: true
`})
	name := "ork-" + f.ns
	rbac, err := rbacgen.Generate(set, rbacgen.Options{Name: name, Namespace: f.ns})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := rbac.YAML("e2e")
	if err != nil {
		t.Fatal(err)
	}
	env.Kubectl(t, manifest, "apply", "-f", "-")
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(set, rbacgen.Options{Name: name, Namespace: f.ns}) {
		attrs = append(attrs, p.Attributes())
	}
	env.WaitAllowed(t, f.ns, name, attrs...)

	f.start(set, env.ServiceAccountConfig(f.ns, name))
	cr := f.createCR("web", map[string]any{"replicas": 2})
	f.waitReady("web", "True")
	for _, child := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{deployments, "web"}, {services, "web-svc"}} {
		obj, err := f.get(child.gvr, child.name)
		if err != nil {
			t.Errorf("child not applied under the generated role: %v", err)
			continue
		}
		assertOwnedByOrk(t, obj, cr)
	}
	f.waitEvent("web", "Normal", "Reconciled")
	ep.nextMatching(t, "with children", func(c call) bool { return strings.Contains(string(c.raw), `"children"`) })
	if logs := strings.ToLower(f.logs.String()); strings.Contains(logs, "forbidden") {
		t.Errorf("ork logged a forbidden error under the generated role:\n%s", f.logs.String())
	}
}

// The preflight refuses to start with a list of what is missing.
func TestPreflightListsMissingPermissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set := f.writeKatalog(remoteSpec{endpoint: "http://127.0.0.1:1/"})
	// The namespace's default-less identity: a ServiceAccount with no bindings at all.
	eng := newEngine(t, set, env.ServiceAccountConfig(f.ns, "nobody"), f)
	err := eng.Run(t.Context())
	if err == nil {
		t.Fatal("engine started without any permission")
	}
	for _, want := range []string{"preflight", "verb=list group=apps resource=deployments", "verb=get group=\"\" resource=secrets name=reconciler-token", "resource=apps/status"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("preflight error does not list %q:\n%v", want, err)
		}
	}
}
