package run

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The engine's features and leaves live in subpackages of internal/run that know nothing
// of the engine (docs/architecture.md): none of them, test harnesses aside, may import
// internal/run, directly or through another package.
func TestSubpackagesDoNotImportTheEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const engine = "github.com/orkspace/ork/internal/run"
	harnesses := []string{engine + "/runtest"} // they start the engine for the tests
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var checked int
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == engine || slices.Contains(harnesses, pkg) {
			continue
		}
		deps, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if slices.Contains(strings.Fields(string(deps)), engine) {
			t.Errorf("%s imports %s: a feature gets narrow dependencies and a callback, not the engine", pkg, engine)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no subpackage listed: the test checks nothing")
	}
}
