package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/orkspace/ork/internal/config"
	"github.com/orkspace/ork/internal/rbacgen"
)

// clusterOptions are kubectl's cluster flags, declared once by addClusterFlags for every
// command that talks to a cluster.
type clusterOptions struct {
	kubeconfig, context, as, requestTimeout string
}

// addClusterFlags declares --kubeconfig, and --context, --as and --request-timeout through
// client-go's clientcmd.BindOverrideFlags, with kubectl's names and meanings. Their values
// are read back through the settings (flag > ORK_* > settings file), not the bound struct.
func addClusterFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String(clientcmd.RecommendedConfigPathFlag, "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, else in-cluster)")
	clientcmd.BindOverrideFlags(&clientcmd.ConfigOverrides{}, f, clientcmd.ConfigOverrideFlags{
		AuthOverrideFlags: clientcmd.AuthOverrideFlags{
			Impersonate: clientcmd.FlagInfo{LongName: clientcmd.FlagImpersonate, Description: "user to impersonate for the cluster's requests, as kubectl --as (for checking a ServiceAccount's rights: system:serviceaccount:NS:NAME)"},
		},
		CurrentContext: clientcmd.FlagInfo{LongName: clientcmd.FlagContext, Description: "kubeconfig context to use (default the current context)"},
		Timeout:        clientcmd.FlagInfo{LongName: clientcmd.FlagTimeout, Default: "0", Description: "how long one request to the apiserver may take before it is given up, e.g. 1s, 2m (0: no limit)"},
	})
}

func completeCluster(cfg *config.Config) clusterOptions {
	return clusterOptions{kubeconfig: cfg.String(clientcmd.RecommendedConfigPathFlag), context: cfg.String(clientcmd.FlagContext),
		as: cfg.String(clientcmd.FlagImpersonate), requestTimeout: cfg.String(clientcmd.FlagTimeout)}
}

// restConfig resolves the cluster flags, $KUBECONFIG, ~/.kube/config, else in-cluster.
func (c clusterOptions) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.context, AuthInfo: clientcmdapi.AuthInfo{Impersonate: c.as}, Timeout: c.requestTimeout}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rc, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// Say which files were looked for: a KUBECONFIG naming a missing file reads
		// otherwise like an unset one.
		var missing []string
		for _, p := range rules.Precedence {
			if _, statErr := os.Stat(p); statErr != nil {
				missing = append(missing, p)
			}
		}
		msg := "no cluster to talk to"
		if len(missing) > 0 {
			msg += fmt.Sprintf(" (no kubeconfig at %s)", strings.Join(missing, ", "))
		}
		return nil, errors.New(msg + ": pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run ork inside a cluster")
	}
	if err != nil {
		return nil, fmt.Errorf("cluster config: %w", err)
	}
	return rc, nil
}

// addNamespaceFlag declares -n/--namespace, ork's own namespace, as helm's -n is the
// release's; the custom resources' namespaces are --watch-namespace.
func addNamespaceFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().StringP("namespace", "n", "", usage+" (default $POD_NAMESPACE, else "+rbacgen.DefaultNamespace+")")
}

// orkNamespace is --namespace, else $POD_NAMESPACE (the downward API's, in ork's pod), else
// orkestra-system.
func orkNamespace(env *Env) string {
	if ns := env.Config().String("namespace"); ns != "" {
		return ns
	}
	if ns := env.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return rbacgen.DefaultNamespace
}
