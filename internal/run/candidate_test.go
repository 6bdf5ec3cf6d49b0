package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
)

// ork run refuses a canary candidate until it rolls one out: it must not start and
// reconcile everything with the stable reconciler while the user believes a canary is judged.
func TestRunRefusesACanaryItDoesNotRollOut(t *testing.T) {
	p := filepath.Join(t.TempDir(), "katalog.yaml")
	doc := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: k}
spec:
  crds:
    webapp:
      apiTypes: {group: myorg.io, version: v1, kind: WebApp, plural: webapps}
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "http://127.0.0.1:1/reconcile"
            managedResources: [{group: apps, plural: deployments}]
            candidate: {endpoint: "http://127.0.0.1:2/reconcile", mode: canary}
`
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{p})
	if err != nil || len(findings) > 0 {
		t.Fatalf("load: %v %v", err, findings)
	}
	_, err = New(set, Options{RESTConfig: &rest.Config{Host: "http://127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), "mode \"canary\" is not rolled out") {
		t.Fatalf("New = %v, want the candidate refused", err)
	}
}
