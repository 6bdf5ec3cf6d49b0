package run

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/orkspace/ork/"

// subpackageImports is what each subpackage of internal/run may import of ork's own
// packages, its tests included (docs/architecture.md): a feature gets narrow dependencies
// and a callback, never the engine; a new import is a decision, made here.
var subpackageImports = map[string][]string{
	"internal/run/childwrite": {"internal/decision", "internal/naming", "internal/planner", "internal/precondition", "internal/remote",
		"internal/resources", "internal/run/kobj", "internal/runplan", "internal/target", "internal/trace"},
	"internal/run/apitypes":     {"internal/katalog"},
	"internal/run/apiwarnings":  nil,
	"internal/run/candidate":    {"internal/exchange", "internal/katalog", "internal/leadership", "internal/naming", "internal/remote", "internal/rollout", "internal/run/kobj", "internal/trace"},
	"internal/run/childlabel":   {"internal/naming", "internal/precondition", "internal/run/childwrite", "internal/run/shardring", "internal/shard"},
	"internal/run/crdinstall":   {"internal/katalog", "internal/naming", "internal/run/apitypes"},
	"internal/run/crdqueue":     {"internal/lanequeue"},
	"internal/run/crstatus":     {"internal/precondition", "internal/run/kobj", "internal/run/relatedwatch"},
	"internal/run/dryplan":      {"internal/runplan"},
	"internal/run/inflight":     {"internal/operation"},
	"internal/run/informers":    nil,
	"internal/run/keyledger":    {"internal/remote", "internal/run/childwrite"},
	"internal/run/kobj":         nil,
	"internal/run/liveness":     nil,
	"internal/run/metrics":      {"internal/run/candidate", "internal/run/crdqueue"},
	"internal/run/opcallback":   {"internal/operation"},
	"internal/run/ownedfields":  nil,
	"internal/run/preflight":    {"internal/rbacgen"},
	"internal/run/relatedwatch": {"internal/katalog", "internal/related", "internal/run/informers", "internal/run/kobj"},
	"internal/run/secretcache":  nil,
	"internal/run/servers":      nil,
	"internal/run/shardring":    {"internal/leadership", "internal/naming", "internal/precondition", "internal/run/kobj", "internal/shard", "internal/testkit"},
	"internal/run/spokes":       {"internal/run/childwrite", "internal/target"},
	"internal/run/suspensions":  {"internal/naming", "internal/run/crstatus", "internal/run/kobj"},
	"internal/run/targetpass": {"internal/finalizer", "internal/katalog", "internal/metacreate", "internal/naming", "internal/render",
		"internal/run/apitypes", "internal/run/childwrite", "internal/run/crstatus", "internal/run/kobj", "internal/run/ownedfields",
		"internal/run/spokes", "internal/target"},
}

// harnesses start the engine for the tests: they may import it, and nothing imports them
// but tests.
var harnesses = []string{"internal/run/runtest", "internal/run/rolloutrun", "internal/run/shardrun", "internal/run/targetrun"}

// Every subpackage of internal/run imports only what subpackageImports allows of ork's own
// packages, in its code and its tests; a subpackage nobody listed fails, so that a new one
// states its dependencies.
func TestSubpackagesDoNotImportTheEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var checked int
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		if pkg == "internal/run" || slices.Contains(harnesses, pkg) {
			continue
		}
		allowed, listed := subpackageImports[pkg]
		if !listed {
			t.Errorf("%s is not in subpackageImports: state what it may import of ork's packages", pkg)
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			own, ok := strings.CutPrefix(imp, module)
			if ok && own != pkg && !slices.Contains(allowed, own) {
				t.Errorf("%s imports %s: a feature gets narrow dependencies and a callback (allowed: %v)", pkg, own, allowed)
			}
		}
		checked++
	}
	if checked != len(subpackageImports) {
		t.Errorf("checked %d subpackages, want the %d of subpackageImports", checked, len(subpackageImports))
	}
}
