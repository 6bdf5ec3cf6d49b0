// Package golden compares test output with files under testdata/, and rewrites them when the
// tests run with -update. It is imported by tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the one -update flag of every package's tests (flags are process-wide).
var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Update reports whether the tests run with -update.
func Update() bool { return *update }

// Assert compares got with the file at path, or rewrites the file under -update.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got); run go test -update if the change is intended:\n%s", path, d)
	}
}
