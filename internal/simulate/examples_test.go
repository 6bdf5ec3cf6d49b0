package simulate

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/validate"
)

// Every example directory has a README and a Katalog that validates without a finding, and
// every custom resource of it simulates to a steady state: remote CRDs against a stand-in
// reconciler answering the example's answer.json (a plain ok without one), with the
// example's secret.yaml.
func TestExamplesValidateAndSimulate(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 7 {
		t.Fatalf("examples: %v, want at least 7 directories", dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				t.Errorf("no README.md: %v", err)
			}
			path := filepath.Join(dir, "katalog.yaml")
			set, findings, err := katalog.Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			findings = append(findings, validate.Katalog(set)...)
			for _, f := range findings {
				t.Errorf("finding: %+v", f)
			}
			answer := `{"result":"ok","status":{"phase":"Ready"}}`
			if data, err := os.ReadFile(filepath.Join(dir, "answer.json")); err == nil {
				answer = string(data)
			}
			url, _ := serve(t, func(int, map[string]any) string { return answer })
			var secrets []*unstructured.Unstructured
			if s := filepath.Join(dir, "secret.yaml"); fileExists(s) {
				if secrets, err = manifest.Read(s); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Run(t.Context(), set, Options{Remote: &RemoteOptions{Endpoint: url, Secrets: secrets}})
			if err != nil {
				t.Fatal(err)
			}
			for _, crd := range rep.CRDs {
				if crd.Skipped != "" || len(crd.CRs) == 0 {
					t.Errorf("crds.%s: skipped %q with %d custom resources, want each simulated", crd.Name, crd.Skipped, len(crd.CRs))
				}
				for _, cr := range crd.CRs {
					if cr.Err != "" || cr.SteadyAt == 0 {
						t.Errorf("crds.%s %s: error %q, steady at cycle %d", crd.Name, cr.Ref, cr.Err, cr.SteadyAt)
					}
				}
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
