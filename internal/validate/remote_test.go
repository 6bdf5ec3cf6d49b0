package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

// The token may travel over plain http to loopback and to an in-cluster Service; anywhere
// else it is a warning.
func TestTokenOverHTTPAcceptsLoopbackAndServices(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		warned   bool
	}{
		{"http://127.0.0.1:8088/reconcile", false},
		{"http://localhost:8088/reconcile", false},
		{"http://[::1]:8088/reconcile", false},
		{"http://webapp-reconciler.default.svc:8088/reconcile", false},
		{"http://webapp-reconciler.team-a.svc.cluster.local:8088/reconcile", false},
		{"http://webapp-reconciler.team-a.svc.cluster.local.:8088/reconcile", false},
		{"http://WEBAPP.DEFAULT.SVC/reconcile", false},
		{"https://reconciler.example.com/reconcile", false},
		{"http://reconciler.example.com/reconcile", true},
		{"http://svc.example.com/reconcile", true},
		{"http://reconciler.svc.example.com/reconcile", true},
		{"http://10.0.0.7:8088/reconcile", true},
		{"http://webapp-reconciler/reconcile", true},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			k := filepath.Join(t.TempDir(), "katalog.yaml")
			doc := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    webapp:
      apiTypes: {group: myorg.io, version: v1, kind: WebApp, plural: webapps}
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "` + tc.endpoint + `"
            managedResources: [{group: apps, plural: deployments}]
            auth:
              secretRef: {name: reconciler-token, key: token}
`
			if err := os.WriteFile(k, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			var warned bool
			for _, f := range run(t, k) {
				if f.Rule == katalog.RuleTokenOverHTTP {
					warned = true
				} else {
					t.Errorf("unexpected finding: %s: %s", f.Rule, f.Message)
				}
			}
			if warned != tc.warned {
				t.Errorf("token-over-http warning: %v, want %v", warned, tc.warned)
			}
		})
	}
}
