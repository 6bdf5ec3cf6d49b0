package remote

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// secretRef is a katalog.SecretKeyRef with its name and namespace templates parsed.
type secretRef struct {
	name, namespace text
	key             string
}

func newSecretRef(at string, ref *katalog.SecretKeyRef, defaultKey string) (*secretRef, error) {
	if ref.Name == "" {
		return nil, fmt.Errorf("%s.name is required", at)
	}
	out := &secretRef{key: orDefault(ref.Key, defaultKey)}
	if out.key == "" {
		return nil, fmt.Errorf("%s.key is required", at)
	}
	var err error
	if out.name, err = compileText(at+".name", ref.Name); err != nil {
		return nil, err
	}
	if out.namespace, err = compileText(at+".namespace", ref.Namespace); err != nil {
		return nil, err
	}
	return out, nil
}

// readSecret renders the reference against the CR and reads the value through the SecretSource.
// kind is the CallError kind of a read failure (KindAuth or KindTLS).
func (r *Reconciler) readSecret(ctx context.Context, ref *secretRef, obj map[string]any, what string, kind Kind) ([]byte, error) {
	name, err := ref.name.render(obj)
	if err != nil {
		return nil, callErr(KindRender, err, "render %s secret name: %v", what, err)
	}
	ns, err := ref.namespace.render(obj)
	if err != nil {
		return nil, callErr(KindRender, err, "render %s secret namespace: %v", what, err)
	}
	ns = orDefault(ns, r.defaultNS)
	v, err := r.secrets.SecretValue(ctx, ns, name, ref.key)
	if err != nil {
		return nil, callErr(kind, err, "read %s secret %s/%s key %q: %v", what, ns, name, ref.key, err)
	}
	return v, nil
}

// authConfig is a parsed auth block.
type authConfig struct {
	ref    *secretRef
	header string
	bearer bool
}

func newAuth(at string, a *katalog.Auth) (*authConfig, error) {
	if a == nil {
		return nil, nil
	}
	if a.SecretRef == nil {
		return nil, fmt.Errorf("%s.secretRef is required when auth is set", at)
	}
	ref, err := newSecretRef(at+".secretRef", a.SecretRef, "")
	if err != nil {
		return nil, err
	}
	header := http.CanonicalHeaderKey(orDefault(a.Header, DefaultAuthHeader))
	if !validHeaderName(header) {
		return nil, fmt.Errorf("%s.header: %q is not a valid HTTP header name", at, a.Header)
	}
	return &authConfig{ref: ref, header: header, bearer: header == DefaultAuthHeader}, nil
}

// authHeader returns the auth header's value and the bare token (to scrub from messages).
func (r *Reconciler) authHeader(ctx context.Context, obj map[string]any) (value, token string, err error) {
	raw, err := r.readSecret(ctx, r.auth.ref, obj, "auth", KindAuth)
	if err != nil {
		return "", "", err
	}
	// Secrets made with `echo token > file` end in a newline that is not part of the token.
	token = strings.TrimRight(string(raw), "\r\n")
	if token == "" {
		return "", "", callErr(KindAuth, nil, "auth secret key %q is empty", r.auth.ref.key)
	}
	if !validHeaderValue(token) {
		// Never quote the value: it is the secret.
		return "", "", callErr(KindAuth, nil, "auth secret key %q holds characters not allowed in an HTTP header", r.auth.ref.key)
	}
	if r.auth.bearer {
		return "Bearer " + token, token, nil
	}
	return token, token, nil
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue rejects control characters, which net/http would refuse anyway but with
// an error naming the header rather than the secret key.
func validHeaderValue(s string) bool {
	for _, c := range []byte(s) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
