package sdk

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite go.txtar, the copy of the Go SDK that ork init vendors")

// goCopyFiles are the files of sdk/go that a scaffold needs: the module's go.mod and README
// and the reconciler package, without its tests.
func goCopyFiles(t *testing.T) []string {
	t.Helper()
	names := []string{"go.mod", "README.md"}
	pkg, err := filepath.Glob(filepath.Join("go", "reconciler", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pkg)
	for _, p := range pkg {
		if !strings.HasSuffix(p, "_test.go") {
			names = append(names, filepath.ToSlash(strings.TrimPrefix(p, "go"+string(filepath.Separator))))
		}
	}
	return names
}

// go.txtar, what ork init vendors of the Go SDK, is the SDK as it is in sdk/go.
func TestGoCopyIsCurrent(t *testing.T) {
	a := &txtar.Archive{Comment: []byte("The Go SDK (sdk/go) as ork init vendors it. Generated: go test ./sdk -update.\n")}
	for _, name := range goCopyFiles(t) {
		b, err := os.ReadFile(filepath.Join("go", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		a.Files = append(a.Files, txtar.File{Name: name, Data: b})
	}
	want := txtar.Format(a)
	if *update {
		if err := os.WriteFile("go.txtar", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(goCopy, want) {
		t.Error("sdk/go.txtar is stale: run go test ./sdk -run TestGoCopyIsCurrent -update")
	}
	got := Go()
	if len(got) != len(a.Files) {
		t.Fatalf("Go() returns %d files, want %d", len(got), len(a.Files))
	}
}

// The Python and TypeScript copies hold the packages ork init vendors.
func TestPythonAndTypeScriptFiles(t *testing.T) {
	has := func(files []File, want string) bool {
		for _, f := range files {
			if f.Path == want {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"ork_reconciler/__init__.py", "ork_reconciler/_wire.py", "ork_reconciler/py.typed"} {
		if !has(Python(), want) {
			t.Errorf("Python() lacks %s", want)
		}
	}
	for _, want := range []string{"index.ts", "wire.gen.ts", "handler.ts"} {
		if !has(TypeScript(), want) {
			t.Errorf("TypeScript() lacks %s", want)
		}
	}
	if !bytes.Contains(TypeScriptLock(), []byte(`"node_modules/typescript"`)) {
		t.Error("TypeScriptLock() pins no typescript")
	}
}
