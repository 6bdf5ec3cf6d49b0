package katalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/validate"
)

func katalogWith(crdFile, crFile string) []byte {
	return []byte("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    webapp:\n" +
		"      crdFile: " + crdFile + "\n      crFiles: [" + crFile + "]\n      operatorBox:\n        reconcile:\n          default: true\n")
}

// LoadFS reads the Katalog and every file it names from its file system alone: crdFile and
// crFiles resolve relative to the Katalog's directory, an absolute one from the file
// system's root, ".." stops at the root, and a path that exists only on the host is not
// found.
func TestLoadFSReadsOnlyItsFileSystem(t *testing.T) {
	hostCRD, err := filepath.Abs("../../testdata/validate/fixtures/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hostCRD); err != nil {
		t.Fatal(err) // the host path must exist for the test to mean anything
	}
	for _, tc := range []struct {
		name, crdFile, crFile string
		read                  bool   // the CRD manifest was read
		finding               string // a finding that must be there
	}{
		{"relative", "../fixtures/crd.yaml", "../fixtures/cr-invalid.yaml", true, "cr-schema"},
		{"absolute from the root", "/fixtures/crd.yaml", "/fixtures/cr.yaml", true, ""},
		{"dot-dot stops at the root", "../../../fixtures/crd.yaml", "../fixtures/cr.yaml", true, ""},
		{"a host path is not read", hostCRD, "../fixtures/cr.yaml", false, "crd-file"},
		{"a missing crFile", "../fixtures/crd.yaml", "./nope.yaml", true, "cr-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fixtures(t)
			fsys[fuzzKatalog] = &fstest.MapFile{Data: katalogWith(tc.crdFile, tc.crFile)}
			set, findings, err := katalog.LoadFS(fsys, []string{fuzzKatalog})
			if err != nil {
				t.Fatal(err)
			}
			findings = append(findings, validate.Katalog(set)...)
			c := set.CRD("webapp")
			if c == nil || (c.Manifest != nil) != tc.read {
				t.Fatalf("crdFile %s: manifest read %v, want %v; findings %v", tc.crdFile, c != nil && c.Manifest != nil, tc.read, findings)
			}
			if tc.read && c.APITypes.Kind != "WebApp" {
				t.Errorf("apiTypes %+v not inferred from the crdFile", c.APITypes)
			}
			var rules []string
			for _, f := range findings {
				if f.Severity == katalog.SeverityError {
					rules = append(rules, string(f.Rule))
				}
			}
			if got := strings.Join(rules, ","); tc.finding == "" && got != "" || !strings.Contains(got, tc.finding) {
				t.Errorf("error findings %q, want %q: %v", got, tc.finding, findings)
			}
		})
	}
}

// Load reads from the host through the same resolution: a Katalog outside the working
// directory, a crdFile reached with "..", an absolute crFile; and a missing -f path is
// reported as the user named it.
func TestLoadResolvesHostPaths(t *testing.T) {
	fixturesDir, err := filepath.Abs("../../testdata/validate/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "deploy")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, filepath.Join(fixturesDir, "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(k, katalogWith(rel, filepath.Join(fixturesDir, "cr-invalid.yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{k})
	if err != nil {
		t.Fatal(err)
	}
	findings = append(findings, validate.Katalog(set)...)
	if c := set.CRD("webapp"); c == nil || c.Manifest == nil {
		t.Fatalf("crdFile %s not read: %v", rel, findings)
	}
	var schemaFindings int
	for _, f := range findings {
		if f.Rule == katalog.RuleCRSchema {
			schemaFindings++
		}
	}
	if schemaFindings == 0 {
		t.Errorf("the absolute crFile was not judged against the CRD: %v", findings)
	}
	t.Chdir(dir)
	_, findings, err = katalog.Load([]string{"missing.yaml"})
	if err == nil || len(findings) != 1 || findings[0].Message != "cannot read the file: open missing.yaml: no such file or directory" {
		t.Errorf("a missing file: %v, %+v", err, findings)
	}
}
