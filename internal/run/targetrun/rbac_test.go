package targetrun_test

import (
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/run/runtest"
)

// ork runs as `ork rbac gen` grants on the hub, with a fixed target whose kubeconfig holds an
// identity `ork rbac gen --target` grants on the spoke: the hub's role has no rights on the
// children's types (none is ever there, so none is watched there), the spoke's only those,
// and the children come and go all the same.
func TestTargetWithGeneratedRBAC(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: `            target:
              kubeconfigSecretRef: {name: spoke, key: kubeconfig}
`})
	const sa = "ork"
	f.GrantGeneratedRBAC(set, sa)

	// The spoke: a ServiceAccount with the target role, its token in the hub's Secret.
	ctx := t.Context()
	if _, err := spoke.Clientset.CoreV1().ServiceAccounts(f.NS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := rbacgen.GenerateTarget(set, rbacgen.TargetOptions{Name: f.NS, SubjectName: sa, SubjectNamespace: f.NS})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spoke.Clientset.RbacV1().ClusterRoles().Create(ctx, tr.ClusterRole, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = spoke.Clientset.RbacV1().ClusterRoles().Delete(t.Context(), tr.ClusterRole.Name, metav1.DeleteOptions{})
	})
	if _, err := spoke.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, tr.ClusterRoleBinding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = spoke.Clientset.RbacV1().ClusterRoleBindings().Delete(t.Context(), tr.ClusterRoleBinding.Name, metav1.DeleteOptions{})
	})
	user := "system:serviceaccount:" + f.NS + ":" + sa
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + f.NS, "system:authenticated"}
	// The access review: the managed types, nothing else.
	for _, c := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "deployments", Namespace: f.NS}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "apps", Resource: "deployments"}, true},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "services", Namespace: f.NS}, true},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: f.NS}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: f.NS}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "namespaces"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "coordination.k8s.io", Resource: "leases", Namespace: f.NS}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: f.Group, Resource: "apps"}, false},
	} {
		attrs := c.attrs
		f.Eventually(fmt.Sprintf("%s %s/%s allowed=%v on the spoke", attrs.Verb, attrs.Group, attrs.Resource, c.want), func() (bool, error) {
			res, err := spoke.Clientset.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs},
			}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return res.Status.Allowed == c.want, nil
		})
	}
	tok, err := spoke.Clientset.CoreV1().ServiceAccounts(f.NS).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["spoke"] = &clientcmdapi.Cluster{Server: spoke.Config.Host, CertificateAuthorityData: spoke.Config.CAData}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["spoke"] = &clientcmdapi.Context{Cluster: "spoke", AuthInfo: sa}
	kc.CurrentContext = "spoke"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	putKubeconfig(t, f.NS, "spoke", raw)

	f.Start(set, hub.ServiceAccountConfig(f.NS, sa))
	f.CreateCR("web", spec("ignored"))
	waitReady(f, "web", 15*time.Second)
	sd := spokeDyn(t)
	if _, err := sd.Resource(deployments).Namespace(f.NS).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("the deployment on the spoke: %v", err)
	}
	if err := f.CRs().Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the CR gone", func() (bool, error) {
		_, err := f.CRs().Get(t.Context(), "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := sd.Resource(deployments).Namespace(f.NS).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deployment on the spoke after its CR went: %v", err)
	}
}
