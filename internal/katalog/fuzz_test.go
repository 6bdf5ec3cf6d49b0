package katalog_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/validate"
)

// fixtures is the in-memory file system of the Katalog fuzz target: one CRD (the WebApp of
// the validate suite), its sample custom resources and a CA, where the validate suite's
// Katalogs point (../fixtures/...), so that CRD-dependent validation runs (apiTypes and
// scope from crdFile, template paths against its schema, sample CRs against it).
func fixtures(tb testing.TB) fstest.MapFS {
	tb.Helper()
	fsys := fstest.MapFS{}
	for _, name := range []string{"crd.yaml", "cr.yaml", "cr-invalid.yaml", "ca.pem"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/validate/fixtures", name))
		if err != nil {
			tb.Fatal(err)
		}
		fsys["fixtures/"+name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// fuzzKatalog is where the fuzzed Katalog stands in fixtures' file system.
const fuzzKatalog = "invalid/katalog.yaml"

// FuzzDecodeAndValidate feeds arbitrary bytes to the one Katalog loader and the validator,
// reading through an in-memory file system (LoadFS), never the host's files: nothing
// panics; every rejection is a finding that names its file and says what is wrong; and a
// CRD whose crdFile is the fixture's has its manifest, read from the in-memory file system,
// so the CRD-dependent checks run. Seeds: every Katalog under testdata/validate and examples.
//
//	go test ./internal/katalog -run '^$' -fuzz FuzzDecodeAndValidate -fuzztime 5m
func FuzzDecodeAndValidate(f *testing.F) {
	for _, glob := range []string{"../../testdata/validate/*/*.yaml", "../../examples/*/katalog.yaml"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	base := fixtures(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{fuzzKatalog: &fstest.MapFile{Data: data}}
		for name, file := range base {
			fsys[name] = file
		}
		set, findings, err := katalog.LoadFS(fsys, []string{fuzzKatalog})
		if err != nil {
			t.Fatalf("the Katalog is in the file system, yet: %v", err)
		}
		findings = append(findings, validate.Katalog(set)...)
		for _, fd := range findings {
			if fd.Message == "" || fd.File == "" {
				t.Errorf("a finding without a file or a message: %+v", fd)
			}
		}
		for _, c := range set.CRDs {
			if c.CRDFile == "../fixtures/crd.yaml" && c.Manifest == nil {
				t.Errorf("CRD %s: crdFile %s is in the file system but was not read", c.Name, c.CRDFile)
			}
		}
	})
}
