package targetrun_test

import (
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/run/runtest"
)

// tokenKubeconfig is a kubeconfig for the spoke as the ServiceAccount ns/name, with a token
// of its own (TokenRequest), granted the children's types cluster-wide (the binding is
// returned, to be revoked).
func tokenKubeconfig(t *testing.T, ns, name string) ([]byte, string) {
	t.Helper()
	ctx := t.Context()
	cs := spoke.Clientset
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := ns + "-children"
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
				{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(t.Context(), role, metav1.DeleteOptions{}) })
	}
	binding := ns + "-" + name
	_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: binding},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoleBindings().Delete(t.Context(), binding, metav1.DeleteOptions{}) })
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["spoke"] = &clientcmdapi.Cluster{Server: spoke.Config.Host, CertificateAuthorityData: spoke.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["spoke"] = &clientcmdapi.Context{Cluster: "spoke", AuthInfo: name}
	cfg.CurrentContext = "spoke"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out, binding
}

// A rotated kubeconfig is used from the next pass on, without a restart: once the Secret
// holds another identity's token and the first identity lost its rights, a child deleted on
// the spoke is still put back.
func TestTargetCredentialRotation(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	first, firstBinding := tokenKubeconfig(t, f.NS, "ork-a")
	second, _ := tokenKubeconfig(t, f.NS, "ork-b")
	putKubeconfig(t, f.NS, "spoke", first)
	f.Start(targetKatalog(f, ep), nil)
	sd := spokeDyn(t)

	f.CreateCR("web", spec("spoke"))
	waitReady(f, "web", 10*time.Second)

	sec, err := hub.Clientset.CoreV1().Secrets(f.NS).Get(t.Context(), "spoke", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["kubeconfig"] = second
	if _, err := hub.Clientset.CoreV1().Secrets(f.NS).Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Secret is read at most every SecretTTL (5 s): the first pass after it sees the new one.
	time.Sleep(6 * time.Second)
	f.PatchSpec("web", `{"spec":{"replicas":3}}`)
	f.EventuallyWithin(10*time.Second, "a pass after the rotation", func() (bool, error) {
		return len(ep.CallsFor("web")) >= 2, nil
	})
	if err := spoke.Clientset.RbacV1().ClusterRoleBindings().Delete(t.Context(), firstBinding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := sd.Resource(deployments).Namespace(f.NS).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.Resource(deployments).Namespace(f.NS).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.EventuallyWithin(10*time.Second, "the deployment restored by the second identity", func() (bool, error) {
		u, err := sd.Resource(deployments).Namespace(f.NS).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return u.GetUID() != old.GetUID(), nil
	})
}
