package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/katalog"
)

func TestNewRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "not-pem.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := &katalog.SecretKeyRef{Name: "tok", Key: "token"}
	tests := []struct {
		name string
		edit func(*katalog.Remote)
		opts Options
		want string
	}{
		{name: "protocol", edit: func(r *katalog.Remote) { r.Protocol = "grpc" },
			want: `crds.webapp.operatorBox.reconcile.remote.protocol: unsupported protocol "grpc" (only http)`},
		{name: "timeout not a duration", edit: func(r *katalog.Remote) { r.Timeout = "soon" },
			want: `crds.webapp.operatorBox.reconcile.remote.timeout: "soon" is not a positive duration such as 30s`},
		{name: "timeout zero", edit: func(r *katalog.Remote) { r.Timeout = "0s" },
			want: `remote.timeout: "0s" is not a positive duration`},
		{name: "endpoint relative", edit: func(r *katalog.Remote) { r.Endpoint = "/reconcile" },
			want: `remote.endpoint: endpoint "/reconcile" is not an absolute http(s) URL`},
		{name: "endpoint ftp", edit: func(r *katalog.Remote) { r.Endpoint = "ftp://host/x" },
			want: `endpoint "ftp://host/x" is not an absolute http(s) URL`},
		{name: "endpoint template broken", edit: func(r *katalog.Remote) { r.Endpoint = "http://{{ .x" },
			want: `remote.endpoint: parse template:`},
		{name: "args template broken", edit: func(r *katalog.Remote) { r.Args = map[string]any{"a": []any{"{{ nope }}"}} },
			want: `parse template: template: crds.webapp.operatorBox.reconcile.remote.args.a[0]:1: function "nope" not defined`},
		{name: "exclude path", edit: func(r *katalog.Remote) { r.Payload.Object.Exclude = []string{"metadata", "a..b"} },
			want: `remote.payload.object.exclude[1]: empty segment`},
		{name: "children exclude path", edit: func(r *katalog.Remote) { r.Payload.Children.Exclude = []string{"spec[0]"} },
			want: `remote.payload.children.exclude[0]: unsupported character '['`},
		{name: "auth without secretRef", edit: func(r *katalog.Remote) { r.Auth = &katalog.Auth{Header: "X-Key"} },
			want: `remote.auth.secretRef is required when auth is set`},
		{name: "secretRef without key", edit: func(r *katalog.Remote) { r.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "x"}} },
			want: `remote.auth.secretRef.key is required`},
		{name: "secretRef without name", edit: func(r *katalog.Remote) { r.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Key: "x"}} },
			want: `remote.auth.secretRef.name is required`},
		{name: "header name", edit: func(r *katalog.Remote) { r.Auth = &katalog.Auth{SecretRef: ref, Header: "X Key"} },
			want: `remote.auth.header: "X Key" is not a valid HTTP header name`},
		{name: "auth without SecretSource", edit: func(r *katalog.Remote) { r.Auth = &katalog.Auth{SecretRef: ref} },
			opts: Options{}, want: `a secretRef is declared but no SecretSource was given`},
		{name: "both CA sources", edit: func(r *katalog.Remote) {
			r.TLS = &katalog.TLS{CAFile: "ca.pem", CASecretRef: &katalog.SecretKeyRef{Name: "ca"}}
		}, want: `remote.tls: set caFile or caSecretRef, not both`},
		{name: "caFile missing", edit: func(r *katalog.Remote) { r.TLS = &katalog.TLS{CAFile: "missing.pem"} },
			want: `remote.tls.caFile: open ` + filepath.Join(dir, "missing.pem")},
		{name: "caFile not PEM", edit: func(r *katalog.Remote) { r.TLS = &katalog.TLS{CAFile: "not-pem.txt"} },
			want: `no PEM certificate found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := crd("https://reconciler.example/reconcile", tt.edit)
			c.Source = &katalog.File{Path: filepath.Join(dir, "katalog.yaml")}
			_, err := New(c, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c := crd("https://reconciler.example/reconcile", func(r *katalog.Remote) { r.Timeout = ""; r.Protocol = "" })
	r := mustNew(t, c, Options{})
	if r.Timeout() != 30*time.Second || r.maxBody != 8<<20 || r.defaultNS != "orkestra-system" || r.now == nil {
		t.Errorf("defaults: timeout %s, maxBody %d, namespace %q", r.Timeout(), r.maxBody, r.defaultNS)
	}
	if r.clients.fixed == nil || r.clients.fixed.CheckRedirect == nil {
		t.Error("default client must exist and refuse redirects")
	}
	if _, err := New(&katalog.CRD{Name: "x"}, Options{}); err == nil {
		t.Error("New accepted a CRD without reconcile.remote")
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{8 << 20: "8 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes", 3<<20 + 1: "3145729 bytes"} {
		if got := formatSize(in); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", in, got, want)
		}
	}
}
