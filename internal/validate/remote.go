package validate

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

const remotePath = "operatorBox.reconcile.remote"

// remote checks reconcile.remote against docs/katalog.md#operatorboxreconcileremote.
func (k *checker) remote() {
	r := k.crd.OperatorBox.Reconcile.Remote
	if r == nil {
		return
	}
	k.endpoint(remotePath+".endpoint", r.Endpoint)
	if r.Protocol != "" && r.Protocol != "http" {
		k.errorAt(katalog.RuleProtocol, remotePath+".protocol", fmt.Sprintf("protocol %q is not supported", r.Protocol),
			"http is the only protocol (https endpoints included): remove protocol or set protocol: http")
	}
	if r.Timeout != "" {
		if msg := checkDuration("timeout", r.Timeout); msg != "" {
			k.errorAt(katalog.RuleDuration, remotePath+".timeout", msg, "use a positive Go duration such as 30s (the default)")
		}
	}
	k.templates(remotePath+".args", r.Args)
	k.payload(r.Payload)
	k.related(r)
	k.lifecycle(r)
	k.skipUnchanged(r.SkipUnchanged)
	k.managedResources(r.ManagedResources)
	k.auth(remotePath+".auth", r.Auth)
	k.tokenOverHTTP(remotePath, r.Endpoint, r.Auth)
	k.tls(r.TLS)
	k.candidate(r.Candidate)
}

// tokenOverHTTP warns when the auth token would cross a network in clear text: an http
// endpoint on another host than loopback or an in-cluster Service (a template cannot be
// judged). A Service name keeps the token inside the cluster's pod network, where ork and
// the reconciler both run; encrypting that network is the mesh's job (mTLS), not the
// Katalog's, so `ork init`'s in-cluster endpoint validates clean.
func (k *checker) tokenOverHTTP(at, endpoint string, auth *katalog.Auth) {
	if auth == nil || render.IsTemplate(endpoint) {
		return
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		return
	}
	if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() || inClusterService(h) {
		return
	}
	k.warnAt(katalog.RuleTokenOverHTTP, at+".endpoint",
		fmt.Sprintf("the auth token is sent in clear text to %s over plain http", u.Host),
		"serve the reconciler over https (tls.caFile or tls.caSecretRef for a private CA), or in the cluster "+
			"through its Service, NAME.NAMESPACE.svc (with a mesh's mTLS where the pod network must be encrypted)")
}

// inClusterService says whether host is a Service's cluster DNS name: NAME.NAMESPACE.svc,
// or the same under the default cluster domain.
func inClusterService(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return strings.HasSuffix(h, ".svc") || strings.HasSuffix(h, ".svc.cluster.local")
}

// endpoint checks that the endpoint at `at` is an absolute http(s) URL, or a template that
// parses.
func (k *checker) endpoint(at, ep string) {
	const example = "e.g. https://my-reconciler.internal/reconcile"
	if ep == "" {
		k.errorAt(katalog.RuleEndpoint, at, strings.TrimPrefix(at, "operatorBox.")+" is required", "set endpoint to the reconciler's URL, "+example)
		return
	}
	if render.IsTemplate(ep) {
		k.template(at, ep)
		return
	}
	u, err := url.Parse(ep)
	switch {
	case err != nil:
		k.errorAt(katalog.RuleEndpoint, at, fmt.Sprintf("endpoint %q is not a URL: %v", ep, err), "write an absolute http(s) URL, "+example)
	case u.Scheme == "" || u.Host == "":
		k.errorAt(katalog.RuleEndpoint, at, fmt.Sprintf("endpoint %q is not an absolute URL", ep),
			"write the scheme and host too, "+example)
	case u.Scheme != "http" && u.Scheme != "https":
		k.errorAt(katalog.RuleEndpoint, at, fmt.Sprintf("endpoint %q uses scheme %q: only http and https are supported", ep, u.Scheme),
			"serve the reconciler over http or https, "+example)
	}
}

// payload checks the exclude dot-paths of payload.object and payload.children.
func (k *checker) payload(p katalog.Payload) {
	k.excludes(remotePath+".payload.object.exclude", p.Object.Exclude)
	k.excludes(remotePath+".payload.children.exclude", p.Children.Exclude)
	if len(p.Children.Exclude) > 0 && !p.Children.Enabled {
		k.warnAt(katalog.RuleChildrenExcludeUnused, remotePath+".payload.children.exclude",
			"payload.children.exclude has no effect while payload.children.enabled is false",
			"set payload.children.enabled: true to send owned children, or remove the exclude list")
	}
}

func (k *checker) excludes(at string, paths []string) {
	for i, p := range paths {
		if _, err := dotpath.Parse(p); err != nil {
			k.errorAt(katalog.RuleExcludePath, fmt.Sprintf("%s[%d]", at, i), fmt.Sprintf("exclude path %q: %v", p, err),
				`write dot-separated keys such as metadata.managedFields; escape a dot inside a key as \.`)
		}
	}
}

// managedResources checks each entry names a plural and appears once; an empty list is a
// warning, since every resource the reconciler returns would then be rejected.
func (k *checker) managedResources(mrs []katalog.ManagedResource) {
	at := remotePath + ".managedResources"
	if len(mrs) == 0 {
		k.warnAt(katalog.RuleNoManagedResources, at, "reconcile.remote declares no managedResources: every resource the reconciler returns will be rejected",
			`list each group and plural the reconciler may return, e.g. {group: apps, plural: deployments}`)
		return
	}
	seen := map[string]int{}
	for i, m := range mrs {
		entry := fmt.Sprintf("%s[%d]", at, i)
		if m.Plural == "" {
			k.errorAt(katalog.RuleManagedResourcePlural, entry+".plural", fmt.Sprintf("managedResources[%d] missing plural", i),
				`set plural to the resource name, e.g. deployments (group "" is the core group)`)
			continue
		}
		if m.Plural != strings.ToLower(m.Plural) {
			k.errorAt(katalog.RuleLowercasePlural, entry+".plural", fmt.Sprintf("managedResources[%d].plural %q is not lowercase", i, m.Plural),
				fmt.Sprintf("resource names are lowercase: use %q", strings.ToLower(m.Plural)))
		} else {
			k.managedType(k.api, entry, i, m)
		}
		key := m.Group + "/" + m.Plural
		if first, ok := seen[key]; ok {
			k.errorAt(katalog.RuleDuplicateManagedResource, entry, fmt.Sprintf("managedResources[%d] duplicates managedResources[%d] (group %q, plural %q)",
				i, first, m.Group, m.Plural), "remove the duplicate entry")
			continue
		}
		seen[key] = i
	}
}
