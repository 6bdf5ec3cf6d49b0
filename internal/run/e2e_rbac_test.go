package run_test

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/run/runtest"
)

// 14. The happy path once more, with ork running as the ServiceAccount of `ork rbac gen`'s
// output: the preflight passes and nothing is forbidden.
func TestHappyPathUnderGeneratedRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: `              children:
                enabled: true
`})
	name := "ork-" + f.NS
	rbac, err := rbacgen.Generate(set, rbacgen.Options{Name: name, Namespace: f.NS})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := rbac.YAML("e2e")
	if err != nil {
		t.Fatal(err)
	}
	env.Kubectl(t, manifest, "apply", "-f", "-")
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range rbacgen.Permissions(set, rbacgen.Options{Name: name, Namespace: f.NS}) {
		attrs = append(attrs, p.Attributes())
	}
	env.WaitAllowed(t, f.NS, name, attrs...)

	f.Start(set, env.ServiceAccountConfig(f.NS, name))
	cr := f.CreateCR("web", map[string]any{"replicas": 2})
	f.WaitReady("web", "True")
	for _, child := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{runtest.Deployments, "web"}, {runtest.Services, "web-svc"}} {
		obj, err := f.Get(child.gvr, child.name)
		if err != nil {
			t.Errorf("child not applied under the generated role: %v", err)
			continue
		}
		assertOwnedByOrk(t, obj, cr)
	}
	f.WaitEvent("web", "Normal", "Reconciled")
	ep.NextMatching(t, "with children", func(c call) bool { return strings.Contains(string(c.Raw), `"children"`) })
	if logs := strings.ToLower(f.Logs.String()); strings.Contains(logs, "forbidden") {
		t.Errorf("ork logged a forbidden error under the generated role:\n%s", f.Logs.String())
	}
}

// The preflight refuses to start with a list of what is missing.
func TestPreflightListsMissingPermissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: "http://127.0.0.1:1/"})
	// The namespace's default-less identity: a ServiceAccount with no bindings at all.
	eng := f.NewEngine(set, env.ServiceAccountConfig(f.NS, "nobody"))
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
