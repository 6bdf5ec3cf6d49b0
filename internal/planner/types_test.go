package planner

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/resources"
)

func remoteCRD(managed ...katalog.ManagedResource) *katalog.CRD {
	return &katalog.CRD{Name: "webapp", OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{
		Remote: &katalog.Remote{ManagedResources: managed},
	}}}
}

func build(t *testing.T, raw map[string]any) resources.Object {
	t.Helper()
	o, err := resources.Build(raw, resources.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDeclaredTypesOffline(t *testing.T) {
	db := &katalog.CRD{Name: "db", APITypes: &katalog.APITypes{Group: "data.io", Version: "v1", Kind: "Database", Plural: "databases"}}
	crd := remoteCRD(
		katalog.ManagedResource{Group: "apps", Plural: "deployments"},
		katalog.ManagedResource{Group: "data.io", Plural: "databases"},
		katalog.ManagedResource{Group: "cache.io", Plural: "redisproxies"},
	)
	types := NewTypes(crd, []*katalog.CRD{crd, db})
	tests := []struct {
		name string
		raw  map[string]any
		want string // "" = declared
	}{
		{"intent type declared", map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx"}}, ""},
		{"intent type undeclared", map[string]any{"type": "statefulset", "fields": map[string]any{"name": "db", "image": "pg"}},
			`StatefulSet "db": type statefulsets.apps is not declared in managedResources (declare it: {group: "apps", plural: statefulsets})`},
		{"full form of a built-in kind", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s"}},
			`Service "s": type services is not declared in managedResources (declare it: {group: "", plural: services})`},
		{"a Katalog CRD's plural", map[string]any{"apiVersion": "data.io/v1", "kind": "Database", "metadata": map[string]any{"name": "d"}}, ""},
		{"a guessed -ies plural", map[string]any{"type": "custom", "fields": map[string]any{"apiVersion": "cache.io/v1", "kind": "RedisProxy", "name": "r"}}, ""},
		{"an unknown kind gets the kind+s guess", map[string]any{"apiVersion": "x.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}},
			`type widgets.x.io is not declared`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
				"metadata": map[string]any{"name": "my-webapp", "namespace": "prod", "uid": "u-1"}}}
			_, err := types.Planner(nil).Child(cr, build(t, tt.raw))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("want declared, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		gr   schema.GroupResource
		want string
	}{
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, "deployment"},
		{schema.GroupResource{Resource: "services"}, "service"},
		{schema.GroupResource{Resource: "pods"}, "pods"},
		{schema.GroupResource{Group: "data.io", Resource: "databases"}, "databases.data.io"},
		{schema.GroupResource{Resource: "endpoints"}, "endpoints"},
		{schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "ingress"},
	}
	for _, tt := range tests {
		if got := Key(tt.gr); got != tt.want {
			t.Errorf("Key(%v) = %q, want %q", tt.gr, got, tt.want)
		}
	}
}

func TestBuildPlansAndChildrenAsOrkRunPresentsThem(t *testing.T) {
	crd := remoteCRD(katalog.ManagedResource{Group: "apps", Plural: "deployments"}, katalog.ManagedResource{Plural: "services"})
	types := NewTypes(crd, []*katalog.CRD{crd})
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": "my-webapp", "namespace": "prod", "uid": "u-1"}}}
	built, errs := types.Build([]map[string]any{
		{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx"}},
		{"type": "deployment", "fields": map[string]any{"name": "other", "image": "nginx", "namespace": "ops"}},
		{"type": "service", "fields": map[string]any{"name": "web", "port": 80}},
	}, cr, nil)
	if errs != nil {
		t.Fatal(errs)
	}
	dep, elsewhere, svc := built[0].Obj, built[1].Obj, built[2].Obj
	if dep.GetNamespace() != "prod" || !ControlledBy(cr, dep) {
		t.Errorf("deployment in %q controlled=%v: want controlled by the CR", dep.GetNamespace(), ControlledBy(cr, dep))
	}
	if ControlledBy(cr, elsewhere) || elsewhere.GetLabels()[naming.ManagedByLabel] != naming.ManagedBy || elsewhere.GetAnnotations()[naming.OwnerAnnotation] != "u-1" {
		t.Errorf("an object in another namespace: controlled=%v labels=%v annotations=%v; want not controlled, managed-by set, marked with the owner",
			ControlledBy(cr, elsewhere), elsewhere.GetLabels(), elsewhere.GetAnnotations())
	}
	got := NewTypes(remoteCRD(katalog.ManagedResource{Group: "apps", Plural: "deployments"}), nil).Children([]*unstructured.Unstructured{dep, svc})
	if len(got) != 1 || got["deployment"]["web"] == nil {
		t.Errorf("children %v: want only the declared deployment, keyed deployment/web", got)
	}
	if ref := types.Ref(svc); ref != "services/web" {
		t.Errorf("Ref = %q", ref)
	}
}

func TestBuildIsAllOrNothing(t *testing.T) {
	crd := remoteCRD(katalog.ManagedResource{Group: "apps", Plural: "deployments"})
	types := NewTypes(crd, []*katalog.CRD{crd})
	dep := map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx"}}
	sts := map[string]any{"type": "statefulset", "fields": map[string]any{"name": "db", "image": "pg"}}
	typo := map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "imagee": "nginx"}}
	tests := []struct {
		name    string
		entries []map[string]any
		objs    int
		reason  string
		message string
	}{
		{"all good", []map[string]any{dep}, 1, "", ""},
		{"an undeclared type", []map[string]any{dep, sts}, 0, ReasonApplyFailed,
			`nothing applied: resources[1]: StatefulSet "db": type statefulsets.apps is not declared in managedResources (declare it: {group: "apps", plural: statefulsets})`},
		{"an invalid entry wins over an undeclared one", []map[string]any{sts, typo}, 0, ReasonInvalidResource,
			`nothing applied: resources[1] (deployment): field "imagee": unknown field (did you mean "image"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
				"metadata": map[string]any{"name": "my-webapp", "namespace": "default", "uid": "u-1"}}}
			objs, errs := types.Build(tt.entries, cr, nil)
			if len(objs) != tt.objs {
				t.Errorf("%d objects, want %d", len(objs), tt.objs)
			}
			if tt.reason == "" {
				if errs != nil {
					t.Errorf("errors %v", errs)
				}
				return
			}
			f := Verdict(errs)
			if f == nil || f.Reason != tt.reason || f.Message != tt.message {
				t.Errorf("verdict %v\nwant %s: %s", f, tt.reason, tt.message)
			}
		})
	}
}

// Offline, a built-in kind takes its scope and plural from Kubernetes' own table, as the
// cluster's discovery gives them to ork run: a ClusterRole of a CR in prod is cluster-scoped
// and owned by annotation, a cluster-scoped CR may return a Namespace, NetworkPolicy's plural
// is networkpolicies. Only a kind ork cannot know is guessed, and a refusal that rests on the
// guess says so.
func TestScopeOffline(t *testing.T) {
	crd := remoteCRD(
		katalog.ManagedResource{Group: "rbac.authorization.k8s.io", Plural: "clusterroles"},
		katalog.ManagedResource{Group: "", Plural: "namespaces"},
		katalog.ManagedResource{Group: "networking.k8s.io", Plural: "networkpolicies"},
		katalog.ManagedResource{Group: "x.io", Plural: "widgets"},
	)
	types := NewTypes(crd, []*katalog.CRD{crd})
	clusterRole := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "reader"}}
	tests := []struct {
		name      string
		namespace string // the CR's
		raw       map[string]any
		wantNS    string
		wantOwner string // "ref" (controller ownerReference), "annotation"
		wantErr   string
	}{
		{"a ClusterRole of a namespaced CR", "prod", clusterRole, "", "annotation", ""},
		{"a ClusterRole of a cluster-scoped CR", "", clusterRole, "", "ref", ""},
		{"a Namespace of a cluster-scoped CR", "",
			map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a"}}, "", "ref", ""},
		{"a NetworkPolicy's plural", "prod",
			map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": map[string]any{"name": "deny"}}, "prod", "ref", ""},
		{"an unknown kind of a cluster-scoped CR", "",
			map[string]any{"apiVersion": "x.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}, "", "", "scope unknown offline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
				"metadata": map[string]any{"name": "my-webapp", "uid": "u-1"}}}
			cr.SetNamespace(tt.namespace)
			c, err := types.Planner(nil).Child(cr, build(t, tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Obj.GetNamespace(); got != tt.wantNS {
				t.Errorf("namespace %q, want %q", got, tt.wantNS)
			}
			refs, ann := c.Obj.GetOwnerReferences(), c.Obj.GetAnnotations()[naming.OwnerAnnotation]
			switch tt.wantOwner {
			case "ref":
				if len(refs) != 1 || ann != "" {
					t.Errorf("ownerReferences %v, annotation %q: want one controller reference", refs, ann)
				}
			case "annotation":
				if len(refs) != 0 || ann != "u-1" {
					t.Errorf("ownerReferences %v, annotation %q: want the owner annotation only", refs, ann)
				}
			}
		})
	}
}
