package remote

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

// tlsEndpoint starts a loopback HTTPS reconciler and writes its certificate, which is its
// own CA, to dir/certs/ca.pem.
func tlsEndpoint(t *testing.T) (srv *httptest.Server, caPEM []byte, dir string) {
	t.Helper()
	srv = httptest.NewTLSServer(answer(200, `{"result":"ok"}`))
	t.Cleanup(srv.Close)
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "certs", "ca.pem"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, caPEM, dir
}

func TestTLSVerification(t *testing.T) {
	srv, caPEM, dir := tlsEndpoint(t)
	tests := []struct {
		name    string
		tls     *katalog.TLS
		secrets *secrets
		wantErr string // substring; "" means success
	}{
		{name: "no CA: verification fails", tls: nil,
			wantErr: "certificate signed by unknown authority (trust the endpoint's CA with tls.caFile or tls.caSecretRef)"},
		{name: "caFile relative to the Katalog file", tls: &katalog.TLS{CAFile: "certs/ca.pem"}},
		{name: "caFile absolute", tls: &katalog.TLS{CAFile: filepath.Join(dir, "certs", "ca.pem")}},
		{name: "caSecretRef, default key ca.crt", tls: &katalog.TLS{CASecretRef: &katalog.SecretKeyRef{Name: "endpoint-ca"}},
			secrets: newSecrets("orkestra-system/endpoint-ca/ca.crt", string(caPEM))},
		{name: "caSecretRef without a certificate", tls: &katalog.TLS{CASecretRef: &katalog.SecretKeyRef{Name: "endpoint-ca"}},
			secrets: newSecrets("orkestra-system/endpoint-ca/ca.crt", "not a pem"),
			wantErr: `tls.caSecretRef key "ca.crt": no PEM certificate found`},
		{name: "caSecretRef missing", tls: &katalog.TLS{CASecretRef: &katalog.SecretKeyRef{Name: "endpoint-ca"}},
			secrets: newSecrets(),
			wantErr: `read CA secret orkestra-system/endpoint-ca key "ca.crt"`},
		{name: "insecureSkipVerify", tls: &katalog.TLS{InsecureSkipVerify: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := crd(srv.URL, func(rem *katalog.Remote) { rem.TLS = tt.tls })
			c.Source = &katalog.File{Path: filepath.Join(dir, "katalog.yaml")}
			opts := Options{}
			if tt.secrets != nil {
				opts.Secrets = tt.secrets
			}
			r := mustNew(t, c, opts)
			_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
				return
			}
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != KindTLS || !strings.Contains(ce.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want KindTLS containing %q", err, tt.wantErr)
			}
			if o := Decide(nil, err); o.Reason != ReasonRemoteTLSError {
				t.Errorf("Decide = %+v", o)
			}
		})
	}
}

func TestCASecretIsReReadAndItsClientReused(t *testing.T) {
	srv, caPEM, _ := tlsEndpoint(t)
	sec := newSecrets("ops/ca/bundle", string(caPEM))
	r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
		rem.TLS = &katalog.TLS{CASecretRef: &katalog.SecretKeyRef{Name: "ca", Namespace: "ops", Key: "bundle"}}
	}), Options{Secrets: sec})
	call := func() error {
		_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
		return err
	}

	// Workers call concurrently; they must share one client (and its connections).
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 8 {
		wg.Go(func() {
			for range 4 {
				errs <- call()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.clients.byCA); n != 1 {
		t.Errorf("%d clients for one CA, want 1", n)
	}

	sec.set("ops/ca/bundle", "rotated to garbage")
	if err := call(); err == nil || !strings.Contains(err.Error(), "no PEM certificate found") {
		t.Fatalf("after rotating the CA secret: err = %v, want it re-read", err)
	}
	sec.set("ops/ca/bundle", string(caPEM))
	if err := call(); err != nil {
		t.Fatalf("after restoring the CA: %v", err)
	}
}
