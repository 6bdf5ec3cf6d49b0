package testkit_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/testkit"
)

// Only tests and test-only packages (named *test) import testkit: a binary ork ships must
// not carry test helpers.
func TestOnlyTestsImportTestkit(t *testing.T) {
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
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if pkg == self {
			seen = true
		}
		for _, imp := range fields[1:] {
			if imp == self && !strings.HasSuffix(pkg, "test") {
				t.Errorf("%s imports testkit outside its tests", pkg)
			}
		}
	}
	if !seen {
		t.Fatalf("go list did not list %s: the check saw no packages", self)
	}
}
