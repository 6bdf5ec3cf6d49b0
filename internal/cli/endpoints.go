package cli

import (
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/katalog"
)

// crdPrefix is the CRD= of --endpoint CRD=URL. A URL never matches it: its scheme's colon
// comes before any '='.
var crdPrefix = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)=`)

// endpointOverrides resolves `ork run`'s --endpoint values against set: CRD=URL for a named
// remote CRD, or URL alone for the Katalog's only remote CRD (as --crd may be left out of
// ork remote check). It returns CRD name -> URL; a CRD given twice is a usage error.
func endpointOverrides(set *katalog.Set, values []string) (map[string]string, error) {
	out := make(map[string]string, len(values))
	for _, v := range values {
		crd, rawURL, err := crdValue(set, "--endpoint", v)
		if err != nil {
			return nil, err
		}
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageError("--endpoint %s: want an absolute http(s) URL, e.g. %s=http://127.0.0.1:8088/reconcile", v, crd.Name)
		}
		if _, dup := out[crd.Name]; dup {
			return nil, usageError("--endpoint: CRD %q is given twice", crd.Name)
		}
		out[crd.Name] = rawURL
	}
	return out, nil
}

// crdValue splits one CRD=VALUE of flag and resolves the CRD against set: the remote CRD
// named, or the Katalog's only remote CRD for a VALUE alone.
func crdValue(set *katalog.Set, flag, v string) (*katalog.CRD, string, error) {
	name, value := "", v
	if m := crdPrefix.FindStringSubmatch(v); m != nil {
		name, value = m[1], v[len(m[0]):]
	}
	crd, err := remoteCRDOf(set, name, flag)
	return crd, value, err
}

// timeoutOverrides resolves `ork run`'s --endpoint-timeout values (CRD=DURATION, or
// DURATION alone for the only remote CRD) to CRD name -> a positive Go duration.
func timeoutOverrides(set *katalog.Set, values []string) (map[string]string, error) {
	out := make(map[string]string, len(values))
	for _, v := range values {
		crd, raw, err := crdValue(set, "--endpoint-timeout", v)
		if err != nil {
			return nil, err
		}
		if d, err := time.ParseDuration(raw); err != nil || d <= 0 {
			return nil, usageError("--endpoint-timeout %s: want a positive Go duration, e.g. %s=45s", v, crd.Name)
		}
		if _, dup := out[crd.Name]; dup {
			return nil, usageError("--endpoint-timeout: CRD %q is given twice", crd.Name)
		}
		out[crd.Name] = raw
	}
	return out, nil
}

// authSecretOverrides resolves `ork run`'s --auth-secret values (CRD=[NAMESPACE/]NAME:KEY,
// or the reference alone for the only remote CRD) to CRD name -> the Secret key whose value
// is the token. A reference without a namespace is in ork's own, as a secretRef's is.
func authSecretOverrides(set *katalog.Set, values []string) (map[string]*katalog.SecretKeyRef, error) {
	out := make(map[string]*katalog.SecretKeyRef, len(values))
	for _, v := range values {
		crd, raw, err := crdValue(set, "--auth-secret", v)
		if err != nil {
			return nil, err
		}
		ref, problem := parseSecretKeyRef(raw)
		if problem != "" {
			return nil, usageError("--auth-secret %s: %s; want CRD=[NAMESPACE/]NAME:KEY, e.g. %s=ops/%s-token:token", v, problem, crd.Name, crd.Name)
		}
		if _, dup := out[crd.Name]; dup {
			return nil, usageError("--auth-secret: CRD %q is given twice", crd.Name)
		}
		out[crd.Name] = ref
	}
	return out, nil
}

// parseSecretKeyRef reads [NAMESPACE/]NAME:KEY; problem says what is wrong with it.
func parseSecretKeyRef(s string) (ref *katalog.SecretKeyRef, problem string) {
	ref = &katalog.SecretKeyRef{}
	// Neither a namespace nor a name holds a ':'.
	secret, key, ok := strings.Cut(s, ":")
	if !ok || key == "" {
		return nil, "no :KEY"
	}
	ref.Key = key
	ns, name, hasNS := strings.Cut(secret, "/")
	if hasNS {
		ref.Namespace, ref.Name = ns, name
	} else {
		ref.Name = secret
	}
	var errs []string
	if hasNS {
		for _, e := range validation.IsDNS1123Label(ref.Namespace) {
			errs = append(errs, "namespace: "+e)
		}
	}
	for _, e := range validation.IsDNS1123Subdomain(ref.Name) {
		errs = append(errs, "name: "+e)
	}
	for _, e := range validation.IsConfigMapKey(ref.Key) {
		errs = append(errs, "key: "+e)
	}
	if len(errs) > 0 {
		return nil, strings.Join(errs, "; ")
	}
	return ref, ""
}

// overrideRemotes is set with `ork run`'s --endpoint, --endpoint-timeout and --auth-secret
// applied, on copies, each override logged: a usage error names a flag's wrong value.
func overrideRemotes(set *katalog.Set, opts runOptions, logger *slog.Logger) (*katalog.Set, error) {
	endpoints, err := endpointOverrides(set, opts.endpoints)
	if err != nil {
		return nil, err
	}
	timeouts, err := timeoutOverrides(set, opts.timeouts)
	if err != nil {
		return nil, err
	}
	secrets, err := authSecretOverrides(set, opts.authSecrets)
	if err != nil {
		return nil, err
	}
	out := map[string]katalog.RemoteOverride{}
	for _, c := range set.CRDs {
		o := katalog.RemoteOverride{Endpoint: endpoints[c.Name], Timeout: timeouts[c.Name], AuthSecret: secrets[c.Name]}
		if o == (katalog.RemoteOverride{}) {
			continue
		}
		out[c.Name] = o
		if o.Endpoint != "" {
			logger.Info("endpoint overridden for this run", "crd", c.Name, "endpoint", redactURL(o.Endpoint))
		}
		if o.Timeout != "" {
			logger.Info("timeout overridden for this run", "crd", c.Name, "timeout", o.Timeout)
		}
		if r := o.AuthSecret; r != nil {
			ns := r.Namespace
			if ns == "" {
				ns = "(ork's namespace)"
			}
			logger.Info("auth Secret overridden for this run", "crd", c.Name, "namespace", ns, "secret", r.Name, "key", r.Key)
		}
	}
	return set.WithRemotes(out), nil
}

// redactURL is raw with a password in its user info masked, for logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
