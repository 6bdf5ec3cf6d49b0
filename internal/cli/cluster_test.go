package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Every command that talks to a cluster declares kubectl's cluster flags, and every
// --namespace but ork init's deprecated one is -n, ork's own namespace.
func TestClusterFlagsAndNamespaceShorthand(t *testing.T) {
	root := NewRootCmd(&Env{Getenv: func(string) string { return "" }})
	cluster := []string{"ork run", "ork rollout status", "ork finalizers release", "ork trace"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if slices.Contains(cluster, c.CommandPath()) {
			for _, name := range []string{"kubeconfig", "context", "as", "request-timeout"} {
				if c.Flags().Lookup(name) == nil {
					t.Errorf("%s has no --%s", c.CommandPath(), name)
				}
			}
		}
		if f := c.LocalFlags().Lookup("namespace"); f != nil && c.Name() != "init" && f.Shorthand != "n" {
			t.Errorf("%s --namespace has shorthand %q, want -n", c.CommandPath(), f.Shorthand)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// --context, --as and --request-timeout reach the client's config, as kubectl's do.
func TestClusterFlagsReachTheRESTConfig(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
current-context: a
clusters:
- {name: a, cluster: {server: "https://a.example:6443"}}
- {name: b, cluster: {server: "https://b.example:6443"}}
users:
- {name: u, user: {token: t}}
contexts:
- {name: a, context: {cluster: a, user: u}}
- {name: b, context: {cluster: b, user: u}}
`
	if err := os.WriteFile(kc, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := clusterOptions{kubeconfig: kc, context: "b", as: "system:serviceaccount:ops:ork", requestTimeout: "5s"}.restConfig()
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://b.example:6443" || rc.Impersonate.UserName != "system:serviceaccount:ops:ork" || rc.Timeout != 5*time.Second {
		t.Errorf("host %q, impersonate %q, timeout %v; want context b's host, the --as user and 5s", rc.Host, rc.Impersonate.UserName, rc.Timeout)
	}
	rc, err = clusterOptions{kubeconfig: kc}.restConfig()
	if err != nil || rc.Host != "https://a.example:6443" || rc.Impersonate.UserName != "" || rc.Timeout != 0 {
		t.Errorf("defaults: %v, host %q, impersonate %q, timeout %v", err, rc.Host, rc.Impersonate.UserName, rc.Timeout)
	}
}
