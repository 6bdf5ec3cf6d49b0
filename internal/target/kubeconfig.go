package target

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// MaxKubeconfigBytes bounds a kubeconfig read from a Secret: a real one with inline
// certificates is a few KiB, and a Secret's value is parsed on every change.
const MaxKubeconfigBytes = 256 << 10

// restConfig parses a kubeconfig taken from a Secret and returns the rest.Config of its
// current context. Only what the kubeconfig holds inline is used: a reference to a file
// (certificate-authority, client-certificate, client-key, tokenFile) would be read from ork's
// own file system (where its ServiceAccount token is), and an exec or auth-provider plugin
// would run a command in ork's pod, so either is refused. TLS verification is what the
// kubeconfig says. No error quotes the kubeconfig: it holds the credentials.
func restConfig(data []byte) (*rest.Config, error) {
	if len(data) == 0 {
		return nil, errors.New("the kubeconfig is empty")
	}
	if len(data) > MaxKubeconfigBytes {
		return nil, fmt.Errorf("the kubeconfig is %d bytes, more than the %d a kubeconfig with inline certificates needs", len(data), MaxKubeconfigBytes)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig does not parse%s", lineOf(err))
	}
	name := cfg.CurrentContext
	ctx, ok := cfg.Contexts[name]
	if name == "" || !ok || ctx == nil {
		return nil, fmt.Errorf("the kubeconfig has no current-context, or it names no context (%d contexts)", len(cfg.Contexts))
	}
	if err := inlineOnly(cfg, ctx); err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig's context %q: %s", name, scrub(err.Error(), cfg))
	}
	return rc, nil
}

// inlineOnly refuses the current context's file references and plugins.
func inlineOnly(cfg *clientcmdapi.Config, ctx *clientcmdapi.Context) error {
	var refused []string
	if c := cfg.Clusters[ctx.Cluster]; c != nil && c.CertificateAuthority != "" {
		refused = append(refused, "certificate-authority (use certificate-authority-data)")
	}
	if a := cfg.AuthInfos[ctx.AuthInfo]; a != nil {
		if a.ClientCertificate != "" {
			refused = append(refused, "client-certificate (use client-certificate-data)")
		}
		if a.ClientKey != "" {
			refused = append(refused, "client-key (use client-key-data)")
		}
		if a.TokenFile != "" {
			refused = append(refused, "tokenFile (use token)")
		}
		if a.Exec != nil {
			refused = append(refused, "exec (a command would run in ork's pod)")
		}
		if a.AuthProvider != nil {
			refused = append(refused, "auth-provider")
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("the kubeconfig's context %q uses %s: a kubeconfig in a Secret must hold its credentials inline", cfg.CurrentContext, strings.Join(refused, ", "))
	}
	return nil
}

var yamlLine = regexp.MustCompile(`line \d+`)

// lineOf is the line a parse error names, if any: parse errors may quote the text around
// the problem, and that text may be the token.
func lineOf(err error) string {
	if l := yamlLine.FindString(err.Error()); l != "" {
		return " (" + l + ")"
	}
	return ""
}

// scrub removes every credential of cfg from s, for errors of client-go that might carry one.
func scrub(s string, cfg *clientcmdapi.Config) string {
	for _, a := range cfg.AuthInfos {
		if a == nil {
			continue
		}
		for _, secret := range []string{a.Token, a.Password, string(a.ClientKeyData)} {
			if secret != "" {
				s = strings.ReplaceAll(s, secret, "[redacted]")
			}
		}
	}
	return s
}

// forTarget sets what ork decides for every spoke's client, on a copy of rc.
func forTarget(rc *rest.Config, qps float32, burst int, userAgent string) *rest.Config {
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst = qps, burst
	if userAgent != "" {
		rc.UserAgent = userAgent
	}
	if rc.Proxy == nil {
		// client-go's default proxy, set explicitly: a config with a Proxy gets a transport
		// of its own instead of one from client-go's process-wide cache, which is never
		// emptied, so that a client dropped after a rotation closes its connections and a
		// rotated certificate leaves nothing behind.
		rc.Proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	return rc
}
