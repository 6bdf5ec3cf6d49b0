package testkit_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/testkit"
)

// Only tests and test-only packages (named *test) import testkit or internal/run's e2e
// harness runtest: a binary ork ships must not carry test helpers.
func TestOnlyTestsImportTestHelpers(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// .Imports lists the non-test imports; _test.go files' imports are in other fields.
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/orkspace/ork/internal/testkit"
	helpers := map[string]bool{self: true, "github.com/orkspace/ork/internal/run/runtest": true}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		seen[pkg] = true
		for _, imp := range fields[1:] {
			if helpers[imp] && !strings.HasSuffix(pkg, "test") {
				t.Errorf("%s imports the test helpers %s outside its tests", pkg, imp)
			}
		}
	}
	for h := range helpers {
		if !seen[h] {
			t.Fatalf("go list did not list %s: the check saw no packages", h)
		}
	}
}
