package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
)

func TestAuthHeaderFromSecret(t *testing.T) {
	tests := []struct {
		name      string
		auth      katalog.Auth
		secrets   *secrets
		header    string // the header that must carry the token
		want      string
		wantReads []string
	}{
		{
			name:    "Authorization by default: Bearer token",
			auth:    katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "ops", Key: "token"}},
			secrets: newSecrets("ops/tok/token", "s3cr3t-token"),
			header:  "Authorization", want: "Bearer s3cr3t-token",
			wantReads: []string{"ops/tok/token"},
		},
		{
			name:    "other header: raw token, trailing newline trimmed",
			auth:    katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "ops", Key: "token"}, Header: "X-Api-Key"},
			secrets: newSecrets("ops/tok/token", "s3cr3t-token\n"),
			header:  "X-Api-Key", want: "s3cr3t-token",
			wantReads: []string{"ops/tok/token"},
		},
		{
			name:    "header name case-insensitive: authorization is still Bearer",
			auth:    katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "ops", Key: "token"}, Header: "authorization"},
			secrets: newSecrets("ops/tok/token", "s3cr3t-token"),
			header:  "Authorization", want: "Bearer s3cr3t-token",
			wantReads: []string{"ops/tok/token"},
		},
		{
			name:    "templated name, no namespace: ork's namespace",
			auth:    katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "{{ .metadata.name }}-token", Key: "token"}},
			secrets: newSecrets("ork-ns/my-webapp-token/token", "per-cr"),
			header:  "Authorization", want: "Bearer per-cr",
			wantReads: []string{"ork-ns/my-webapp-token/token"},
		},
		{
			name:    "templated namespace: the CR's",
			auth:    katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "{{ .metadata.namespace }}", Key: "token"}},
			secrets: newSecrets("default/tok/token", "ns-token"),
			header:  "Authorization", want: "Bearer ns-token",
			wantReads: []string{"default/tok/token"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
			r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) { rem.Auth = &tt.auth }),
				Options{Secrets: tt.secrets, DefaultNamespace: "ork-ns"})
			if _, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()}); err != nil {
				t.Fatal(err)
			}
			got := next(t, reqs)
			if v := got.header.Get(tt.header); v != tt.want {
				t.Errorf("%s = %q, want %q", tt.header, v, tt.want)
			}
			if tt.header != "Authorization" && got.header.Get("Authorization") != "" {
				t.Errorf("Authorization set too: %q", got.header.Get("Authorization"))
			}
			if d := cmp.Diff(tt.wantReads, tt.secrets.reads); d != "" {
				t.Errorf("secret reads (-want +got):\n%s", d)
			}
		})
	}
}

func TestRotatedTokenIsUsedOnTheNextCall(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
	sec := newSecrets("orkestra-system/tok/token", "first")
	r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
		rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Key: "token"}}
	}), Options{Secrets: sec})

	var got []string
	for _, token := range []string{"first", "second"} {
		sec.set("orkestra-system/tok/token", token)
		if _, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()}); err != nil {
			t.Fatal(err)
		}
		got = append(got, next(t, reqs).header.Get("Authorization"))
	}
	if d := cmp.Diff([]string{"Bearer first", "Bearer second"}, got); d != "" {
		t.Errorf("Authorization per call (-want +got):\n%s", d)
	}
}

func TestAuthSecretFailuresSendNothing(t *testing.T) {
	tests := []struct {
		name    string
		secrets *secrets
		want    string
	}{
		{name: "secret missing", secrets: newSecrets(), want: `read auth secret orkestra-system/tok key "token": secret orkestra-system/tok not found`},
		{name: "empty token", secrets: newSecrets("orkestra-system/tok/token", "\n"), want: `auth secret key "token" is empty`},
		{name: "token with a newline inside", secrets: newSecrets("orkestra-system/tok/token", "ab\ncd"), want: `auth secret key "token" holds characters not allowed in an HTTP header`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
			r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
				rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Key: "token"}}
			}), Options{Secrets: tt.secrets})
			_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != KindAuth {
				t.Fatalf("err = %v, want a KindAuth CallError", err)
			}
			if ce.Error() != tt.want {
				t.Errorf("message = %q, want %q", ce.Error(), tt.want)
			}
			if strings.Contains(ce.Error(), "ab\ncd") {
				t.Errorf("message quotes the token: %q", ce.Error())
			}
			if len(reqs) != 0 {
				t.Error("a request was sent without its auth header")
			}
			if o := Decide(nil, err); o.Reason != ReasonAuthSecretError || o.Action != Backoff {
				t.Errorf("Decide = %+v", o)
			}
		})
	}
}

// TestTokenNeverLeaks has the endpoint echo the token back in every place a message is
// built from: an error body, an error result, a field name, a result value.
func TestTokenNeverLeaks(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a"
	echoes := []struct {
		name   string
		status int
		body   string // %s is replaced by the received header value
	}{
		{name: "500 body", status: 500, body: `upstream said: %s`},
		{name: "401 body", status: 401, body: `{"message":"bad credentials %s"}`},
		{name: "error result", status: 200, body: `{"result":"error","error":"rejected %s"}`},
		{name: "unknown field", status: 200, body: `{"result":"ok","%s":1}`},
		{name: "unknown result", status: 200, body: `{"result":"%s"}`},
		{name: "invalid requeueAfter", status: 200, body: `{"result":"ok","requeueAfter":"%s"}`},
	}
	for _, header := range []string{"Authorization", "X-Api-Key"} {
		for _, e := range echoes {
			t.Run(header+"/"+e.name, func(t *testing.T) {
				srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(e.status)
					_, _ = w.Write([]byte(strings.ReplaceAll(e.body, "%s", r.Header.Get(header))))
				})
				r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
					rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Key: "token"}, Header: header}
				}), Options{Secrets: newSecrets("orkestra-system/tok/token", token+"\n")})
				res, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
				if err == nil {
					t.Fatal("want an error")
				}
				msg := err.Error() + " " + Decide(res, err).Message
				if res != nil {
					msg += " " + res.Error
				}
				if strings.Contains(msg, token) {
					t.Errorf("token leaked: %s", msg)
				}
				if !strings.Contains(err.Error(), redacted) {
					t.Errorf("the echoed token should show as %s: %s", redacted, err)
				}
			})
		}
	}
}

// stuckSecrets is a SecretSource whose apiserver never answers.
type stuckSecrets struct{}

func (stuckSecrets) SecretValue(ctx context.Context, namespace, name, key string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestSecretReadIsBoundedByTheTimeout(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
	r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
		rem.Timeout = "50ms"
		rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Key: "token"}}
	}), Options{Secrets: stuckSecrets{}})
	_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTimeout {
		t.Fatalf("err = %v, want KindTimeout", err)
	}
	if want := `read auth secret orkestra-system/tok key "token": context deadline exceeded`; ce.Error() != want {
		t.Errorf("message = %q, want %q", ce.Error(), want)
	}
	if len(reqs) != 0 {
		t.Error("a request was sent without its auth header")
	}
}

// A token the reconciler echoes back JSON-escaped, or so that it straddles the point where
// a message is cut, still never shows, not even in part.
func TestEscapedOrCutTokenNeverLeaks(t *testing.T) {
	const token = "tok/9f<8e>&7d6c5b4a"
	pad := strings.Repeat("x", maxErrorText-6) // the cut falls inside the token
	bodies := map[string]func(header string) (int, []byte){
		"500 with a JSON body": func(h string) (int, []byte) {
			b, _ := json.Marshal(map[string]string{"message": "bad credentials " + h})
			return 500, b
		},
		"500 with slashes escaped": func(h string) (int, []byte) {
			return 500, []byte(`{"message":"bad ` + strings.ReplaceAll(h, "/", `\/`) + `"}`)
		},
		"error result cut inside the token": func(h string) (int, []byte) {
			b, _ := json.Marshal(map[string]string{"result": "error", "error": pad + h})
			return 200, b
		},
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
				code, b := body(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
				w.WriteHeader(code)
				_, _ = w.Write(b)
			})
			r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
				rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Key: "token"}}
			}), Options{Secrets: newSecrets("orkestra-system/tok/token", token)})
			res, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error() + " " + Decide(res, err).Message
			if res != nil {
				msg += " " + res.Error
			}
			for _, part := range []string{token, token[:6], `tok\/9f`, `\u003c8e`} {
				if strings.Contains(msg, part) {
					t.Errorf("token (or %q of it) leaked: %s", part, msg)
				}
			}
		})
	}
}
