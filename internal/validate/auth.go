package validate

import (
	"crypto/x509"
	"fmt"
	"strings"

	"golang.org/x/net/http/httpguts"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

// auth checks an auth block (remote.auth, candidate.auth) at `at`: a complete secretRef and
// a valid header name.
func (k *checker) auth(at string, a *katalog.Auth) {
	if a == nil {
		return
	}
	if a.SecretRef == nil {
		k.errorAt(katalog.RuleSecretRef, at+".secretRef", "auth missing secretRef",
			"set auth.secretRef.name and auth.secretRef.key to the Secret that holds the token")
	} else {
		k.secretRef(at+".secretRef", a.SecretRef, "")
	}
	if a.Header != "" && !httpguts.ValidHeaderFieldName(a.Header) {
		k.errorAt(katalog.RuleAuthHeader, at+".header", fmt.Sprintf("header %q is not a valid HTTP header name", a.Header),
			"use a header token such as Authorization or X-Api-Key: no spaces, colons or other separators")
	}
}

// secretRef checks a Secret key reference; name and namespace may be templates.
// secretRef checks a Secret reference; defaultKey, when set, is the key an empty key means
// (tls.caSecretRef reads ca.crt, as cert-manager writes it).
func (k *checker) secretRef(at string, ref *katalog.SecretKeyRef, defaultKey string) {
	switch {
	case ref.Name == "":
		k.errorAt(katalog.RuleSecretRef, at+".name", "secretRef missing name", "set name to the Secret's name")
	case render.IsTemplate(ref.Name):
		k.template(at+".name", ref.Name)
	default:
		k.invalid(at+".name", "secretRef name", ref.Name, validation.IsDNS1123Subdomain(ref.Name), nameHint)
	}
	switch {
	case render.IsTemplate(ref.Namespace):
		k.template(at+".namespace", ref.Namespace)
	case ref.Namespace != "":
		k.invalid(at+".namespace", "secretRef namespace", ref.Namespace, validation.IsDNS1123Label(ref.Namespace), nameHint)
	}
	switch {
	case ref.Key == "" && defaultKey != "":
	case ref.Key == "":
		k.errorAt(katalog.RuleSecretRef, at+".key", "secretRef missing key", "set key to the entry of the Secret's data to read")
	default:
		k.invalid(at+".key", "secretRef key", ref.Key, validation.IsConfigMapKey(ref.Key),
			"Secret keys are letters, digits, '-', '_' and '.'")
	}
}

const nameHint = "Kubernetes names are lowercase letters, digits, '-' and '.'"

// invalid reports the problems Kubernetes' own validation found in a name.
func (k *checker) invalid(at, what, value string, problems []string, hint string) {
	if len(problems) > 0 {
		k.errorAt(katalog.RuleSecretRef, at, fmt.Sprintf("%s %q is invalid: %s", what, value, strings.Join(problems, "; ")), hint)
	}
}

// tls checks reconcile.remote.tls: one CA source, and a caFile that holds a certificate.
func (k *checker) tls(t *katalog.TLS) {
	if t == nil {
		return
	}
	at := remotePath + ".tls"
	if t.CAFile != "" && t.CASecretRef != nil {
		k.errorAt(katalog.RuleTLSCA, at, "tls sets both caFile and caSecretRef",
			"keep one: caSecretRef in a cluster, caFile for local runs")
	}
	if t.CAFile != "" {
		k.caFile(at+".caFile", t.CAFile)
	}
	if t.CASecretRef != nil {
		k.secretRef(at+".caSecretRef", t.CASecretRef, katalog.DefaultCAKey)
	}
	if t.InsecureSkipVerify {
		k.warnAt(katalog.RuleInsecureSkipVerify, at+".insecureSkipVerify", "tls.insecureSkipVerify turns off certificate verification",
			"trust a private CA with caFile or caSecretRef instead")
	}
}

func (k *checker) caFile(at, p string) {
	data, err := k.crd.Source.ReadFile(p)
	if err != nil {
		k.errorAt(katalog.RuleCAFile, at, fmt.Sprintf("cannot read caFile %q: %v", p, katalog.PathlessError(err)), "caFile is relative to the Katalog file")
		return
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		k.errorAt(katalog.RuleCAFile, at, fmt.Sprintf("caFile %q holds no PEM certificate", p),
			"point caFile at a PEM file with -----BEGIN CERTIFICATE----- blocks")
	}
}
