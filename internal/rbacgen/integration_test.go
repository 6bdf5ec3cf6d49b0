package rbacgen_test

import (
	"os"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// deny builds a permission the generated role must not grant.
func deny(verb, group, resource, name string) rbacgen.Permission {
	return rbacgen.Permission{Verb: verb, Group: group, Resource: resource, Name: name}
}

func TestGeneratedRoleAllowsExactlyWhatRunNeeds(t *testing.T) {
	e := env.Require(t)
	tests := []struct {
		name  string
		files []string
		opts  rbacgen.Options
		// denied are neighbours of what is granted, asked in namespace default.
		denied []rbacgen.Permission
		// watchOwn sets WatchNamespaces to the case's own namespace (not default).
		watchOwn bool
	}{
		{
			name:  "remote example",
			files: []string{"../../examples/remote/katalog.yaml"},
			denied: []rbacgen.Permission{
				deny("get", "", "secrets", "another-token"),
				deny("list", "", "secrets", ""),
				deny("get", "", "pods", ""),
				deny("delete", "myorg.io", "webapps", ""),
				deny("create", "myorg.io", "webapps", ""),
				{Verb: "delete", Group: "myorg.io", Resource: "webapps", Subresource: "status"},
				deny("get", "other.example.com", "webapps", ""),
				deny("create", "apps", "daemonsets", ""),
				deny("deletecollection", "apps", "deployments", ""),
				deny("get", "coordination.k8s.io", "leases", ""),
				deny("create", "apiextensions.k8s.io", "customresourcedefinitions", ""),
				deny("create", "rbac.authorization.k8s.io", "clusterroles", ""),
			},
		},
		{
			name:  "remote example with leader election and CRD install",
			files: []string{"../../examples/remote/katalog.yaml"},
			opts:  rbacgen.Options{LeaderElect: true, InstallCRDs: true},
			denied: []rbacgen.Permission{
				deny("delete", "coordination.k8s.io", "leases", ""),
				deny("delete", "apiextensions.k8s.io", "customresourcedefinitions", ""),
				deny("get", "", "secrets", "another-token"),
			},
		},
		{
			name:     "remote example watching its own namespace only",
			files:    []string{"../../examples/remote/katalog.yaml"},
			opts:     rbacgen.Options{LeaderElect: true},
			watchOwn: true,
			denied: []rbacgen.Permission{
				deny("list", "myorg.io", "webapps", ""),
				deny("patch", "myorg.io", "webapps", "my-webapp"),
				{Verb: "patch", Group: "myorg.io", Resource: "webapps", Subresource: "status"},
				deny("create", "apps", "deployments", ""),
				deny("list", "", "services", ""),
				deny("create", "", "events", ""),
				deny("update", "coordination.k8s.io", "leases", ""),
			},
		},
		{
			name:  "templated secret names",
			files: []string{"testdata/secrets.katalog.yaml"},
			denied: []rbacgen.Permission{
				deny("list", "", "secrets", ""),
				deny("update", "", "secrets", "token-a"),
				deny("get", "", "pods", ""),
			},
		},
		{
			name:  "declarative website",
			files: []string{"../../examples/website/katalog.yaml"},
			denied: []rbacgen.Permission{
				deny("get", "", "secrets", ""),
				deny("create", "", "configmaps", ""),
				deny("delete", "myorg.io", "websites", ""),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, findings, err := katalog.Load(tt.files)
			if err != nil || katalog.HasErrors(findings) {
				t.Fatalf("load: %v %v", err, findings)
			}
			// The namespace names the ServiceAccount and the cluster-scoped objects too, so
			// the cases do not overwrite each other's ClusterRole.
			ns := e.Namespace(t)
			opts := tt.opts
			opts.Name, opts.Namespace = ns, ns
			if tt.watchOwn {
				opts.WatchNamespaces = []string{ns}
			}
			res, err := rbacgen.Generate(set, opts)
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := res.YAML("test")
			if err != nil {
				t.Fatal(err)
			}
			t.Log(e.Kubectl(t, manifest, "apply", "-f", "-"))

			perms := rbacgen.Permissions(set, opts)
			waitForRBAC(t, e, ns, perms)
			for _, p := range perms {
				// Cluster-wide and in one namespace, as the engine uses both; a right
				// narrowed to a namespace there only.
				where := []string{"", "default"}
				if p.Namespace != "" {
					where = []string{p.Namespace}
				}
				for _, w := range where {
					if !allowed(t, e.Clientset, ns, ns, w, p) {
						t.Errorf("denied in namespace %q but should be allowed: %+v", w, p)
					}
				}
			}
			for _, p := range tt.denied {
				if allowed(t, e.Clientset, ns, ns, "default", p) {
					t.Errorf("allowed but should be denied: %+v", p)
				}
				// Nor cluster-wide, when watching a namespace: nothing namespaced is.
				if tt.watchOwn && allowed(t, e.Clientset, ns, ns, "", p) {
					t.Errorf("allowed cluster-wide but should be denied: %+v", p)
				}
			}
			t.Logf("%d permissions allowed, %d neighbours denied", len(perms), len(tt.denied))
		})
	}
}

// allowed asks the apiserver whether the ServiceAccount saNamespace/saName may do p in
// namespace, with the groups its token would carry.
func allowed(t *testing.T, admin kubernetes.Interface, saNamespace, saName, namespace string, p rbacgen.Permission) bool {
	t.Helper()
	attrs := p.Attributes()
	attrs.Namespace = namespace // the namespace asked about, not only p's own
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:" + saNamespace + ":" + saName,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &attrs,
	}}
	res, err := admin.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview %+v: %v", p, err)
	}
	return res.Status.Allowed
}

// waitForRBAC waits until the role and binding just applied grant perms to the
// ServiceAccount sa/sa.
func waitForRBAC(t *testing.T, e *testenv.Env, sa string, perms []rbacgen.Permission) {
	t.Helper()
	var attrs []authorizationv1.ResourceAttributes
	for _, p := range perms {
		attrs = append(attrs, p.Attributes())
	}
	e.WaitAllowed(t, sa, sa, attrs...)
}

// TestServiceAccountWorksUnderTheGeneratedRole acts as the ServiceAccount, not only asks
// about it: what the remote example's reconciler needs works, its neighbours get 403.
func TestServiceAccountWorksUnderTheGeneratedRole(t *testing.T) {
	e := env.Require(t)
	e.InstallCRD(t, "../../examples/remote/crd.yaml")
	set, _, err := katalog.Load([]string{"../../examples/remote/katalog.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	ns := e.Namespace(t)
	res, err := rbacgen.Generate(set, rbacgen.Options{Name: ns, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := res.YAML("test")
	if err != nil {
		t.Fatal(err)
	}
	e.Kubectl(t, manifest, "apply", "-f", "-")
	waitForRBAC(t, e, ns, rbacgen.Permissions(set, rbacgen.Options{Name: ns, Namespace: ns}))

	ctx := t.Context()
	admin := e.Clientset
	// The example's token is my-reconciler-token in default: the Secrets of that name
	// elsewhere and of other names there are not ork's.
	for _, s := range []struct{ namespace, name string }{
		{"default", "my-reconciler-token"}, {"default", "another-token"}, {ns, "my-reconciler-token"},
	} {
		_, err := admin.CoreV1().Secrets(s.namespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: s.name}, StringData: map[string]string{"token": "t"},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	webapps := schema.GroupVersionResource{Group: "myorg.io", Version: "v1", Resource: "webapps"}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "myorg.io/v1", "kind": "WebApp", "metadata": map[string]any{"name": "demo"},
	}}
	if _, err := dynamic.NewForConfigOrDie(e.Config).Resource(webapps).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cfg := e.ServiceAccountConfig(ns, ns)
	sa := kubernetes.NewForConfigOrDie(cfg)
	saDyn := dynamic.NewForConfigOrDie(cfg).Resource(webapps).Namespace(ns)
	force := true
	deploy := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"demo"},
	  "spec":{"selector":{"matchLabels":{"app":"demo"}},"template":{"metadata":{"labels":{"app":"demo"}},
	  "spec":{"containers":[{"name":"web","image":"registry.invalid/web:1"}]}}}}`)
	allowed := map[string]error{}
	_, allowed["get the auth secret"] = sa.CoreV1().Secrets("default").Get(ctx, "my-reconciler-token", metav1.GetOptions{})
	_, allowed["server-side apply a deployment"] = sa.AppsV1().Deployments(ns).Patch(ctx, "demo", types.ApplyPatchType, deploy,
		metav1.PatchOptions{FieldManager: "orkestra", Force: &force})
	_, allowed["list webapps cluster-wide"] = dynamic.NewForConfigOrDie(cfg).Resource(webapps).List(ctx, metav1.ListOptions{})
	_, allowed["patch webapp status"] = saDyn.Patch(ctx, "demo", types.MergePatchType,
		[]byte(`{"status":{"phase":"Ready"}}`), metav1.PatchOptions{FieldManager: "orkestra"}, "status")
	for what, err := range allowed {
		if err != nil {
			t.Errorf("%s as the ServiceAccount: %v", what, err)
		}
	}
	forbidden := map[string]error{}
	_, forbidden["get another secret"] = sa.CoreV1().Secrets("default").Get(ctx, "another-token", metav1.GetOptions{})
	_, forbidden["get the secret's name in another namespace"] = sa.CoreV1().Secrets(ns).Get(ctx, "my-reconciler-token", metav1.GetOptions{})
	_, forbidden["list pods"] = sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	forbidden["delete the webapp"] = saDyn.Delete(ctx, "demo", metav1.DeleteOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: got %v, want 403 Forbidden", what, err)
		}
	}
}
