package katalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/validate"
)

// FuzzDecodeAndValidate feeds arbitrary bytes to the one Katalog loader and the validator:
// nothing panics, and every rejection is a finding that names its file and says what is
// wrong. Seeds: every Katalog under testdata/validate and examples.
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
	f.Fuzz(func(t *testing.T, data []byte) {
		set, findings := katalog.Decode(katalog.Source{Path: "fuzz.yaml", Data: data})
		findings = append(findings, validate.Katalog(set)...)
		for _, fd := range findings {
			if fd.Message == "" || fd.File == "" {
				t.Errorf("a finding without a file or a message: %+v", fd)
			}
		}
	})
}
