package sdk

import (
	"os/exec"
	"strings"
	"testing"
)

// The Go SDK's module imports the standard library only: a reconciler built on it pulls in
// none of ork's dependencies.
func TestGoSDKImportsTheStandardLibraryOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...")
	cmd.Dir = "go"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/orkspace/ork/sdk/go/") {
			t.Errorf("the Go SDK imports %s, which is not the standard library", p)
		}
	}
}
