// Package targetrun_test runs ork's engine in-process on one test apiserver (the hub) with
// the children of its custom resources on a second one (the spoke), whose kubeconfig is in a
// Secret on the hub (docs/multicluster.md).
package targetrun_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testenv"
)

var (
	// hub runs ork and holds the custom resources; spoke receives their children. One of
	// each per package: a control plane costs seconds and memory.
	hub, spoke *testenv.Env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv(testenv.SkipEnv) == "1" {
		return testenv.Main(m, &hub)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	s, err := testenv.Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "spoke:", err)
		return 1
	}
	spoke = s
	defer func() {
		if err := spoke.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "spoke:", err)
		}
	}()
	return testenv.Main(m, &hub)
}

// spokeKubeconfig is the spoke's admin kubeconfig (inline certificates), its server
// replaced by server when not empty (a proxy in front of it).
func spokeKubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(spoke.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if server != "" {
		for _, c := range cfg.Clusters {
			c.Server = server
		}
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// putKubeconfig writes the Secret name (key kubeconfig) in the hub's namespace ns.
func putKubeconfig(t *testing.T, ns, name string, kubeconfig []byte) {
	t.Helper()
	_, err := hub.Clientset.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string][]byte{"kubeconfig": kubeconfig},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// spokeNamespace creates the namespace ns on the spoke (ork creates none there).
func spokeNamespace(t *testing.T, ns string) {
	t.Helper()
	_, err := spoke.Clientset.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// proxyToSpoke is a proxy in front of the spoke, and the server URL that goes through it.
func proxyToSpoke(t *testing.T) (*runtest.TCPProxy, string) {
	u, err := url.Parse(spoke.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := runtest.NewTCPProxy(t, u.Host)
	return p, "https://" + p.Addr()
}
