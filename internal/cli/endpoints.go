package cli

import (
	"net/url"
	"regexp"

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
		name, rawURL := "", v
		if m := crdPrefix.FindStringSubmatch(v); m != nil {
			name, rawURL = m[1], v[len(m[0]):]
		}
		crd, err := remoteCRDOf(set, name, "--endpoint")
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

// redactURL is raw with a password in its user info masked, for logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
