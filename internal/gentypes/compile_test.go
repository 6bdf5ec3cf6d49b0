package gentypes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

// uses are reconciler code that reads examples/remote's WebApp through the generated types,
// per language: it type-checks against them, and fails naming the field once the CRD
// renames spec.image.
var uses = map[Lang]struct{ file, code string }{
	Go: {"use.go", `package main

func image(w WebApp, a WebAppArgs) (string, *int64, *string) {
	return w.Spec.Image, a.Replicas, a.LogLevel
}

func main() { _, _, _ = image(WebApp{Spec: &WebAppSpec{Image: "nginx"}}, WebAppArgs{}) }
`},
	Python: {"use.py", `from ork_types import WebApp, WebAppArgs


def image(w: WebApp, a: WebAppArgs) -> str:
    return w["spec"]["image"] + str(a["replicas"])
`},
	TypeScript: {"use.ts", `import type { WebApp, WebAppArgs } from "./ork-types.js";

export function image(w: WebApp, a: WebAppArgs): string {
  return (w.spec?.image ?? "") + String(a.replicas);
}
`},
}

// checkers type-check the directory dir holding the generated file and the use; they skip
// when their tool is missing.
var checkers = map[Lang]func(t *testing.T, dir string) *exec.Cmd{
	Go: func(t *testing.T, dir string) *exec.Cmd {
		write(t, filepath.Join(dir, "go.mod"), "module example.com/reconciler\n\ngo 1.24\n")
		cmd := exec.Command("go", "vet", ".")
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		return cmd
	},
	Python: func(t *testing.T, dir string) *exec.Cmd {
		if _, err := exec.LookPath("mypy"); err != nil {
			t.Skip("mypy is not on PATH")
		}
		return exec.Command("mypy", "--strict", "--cache-dir", filepath.Join(dir, ".mypy_cache"), ".")
	},
	TypeScript: func(t *testing.T, dir string) *exec.Cmd {
		tsc, err := filepath.Abs("../../sdk/ts/node_modules/typescript/bin/tsc")
		if err != nil {
			t.Fatal(err)
		}
		node, err := exec.LookPath("node")
		if _, serr := os.Stat(tsc); err != nil || serr != nil {
			t.Skip("no node, or no sdk/ts/node_modules (npm ci in sdk/ts)")
		}
		return exec.Command(node, tsc, "--strict", "--noEmit", "--module", "nodenext", "--target", "es2022",
			filepath.Join(dir, FileName(TypeScript)), filepath.Join(dir, "use.ts"))
	},
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// check writes the types of set and lang's use into a new directory and type-checks them.
func check(t *testing.T, set *katalog.Set, lang Lang) (string, error) {
	t.Helper()
	src, err := Generate(set, Options{Lang: lang})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, FileName(lang)), string(src))
	write(t, filepath.Join(dir, uses[lang].file), uses[lang].code)
	cmd := checkers[lang](t, dir)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The generated files compile: go vet in a module of their own, mypy --strict, tsc --strict,
// for every golden Katalog.
func TestGeneratedFilesTypeCheck(t *testing.T) {
	for name, path := range katalogs {
		set := load(t, path)
		for _, lang := range Langs() {
			t.Run(name+"/"+string(lang), func(t *testing.T) {
				src, err := Generate(set, Options{Lang: lang})
				if err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				write(t, filepath.Join(dir, FileName(lang)), string(src))
				if lang == TypeScript {
					write(t, filepath.Join(dir, "use.ts"), "export {};\n")
				}
				cmd := checkers[lang](t, dir)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%v:\n%s", err, out)
				}
			})
		}
	}
}

// A reconciler written against the types fails to type-check, naming the field, once the
// CRD renames it and the types are generated again.
func TestRenamedFieldFailsTheReconcilersTypeCheck(t *testing.T) {
	crd, err := os.ReadFile("../../examples/remote/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kat, err := os.ReadFile("../../examples/remote/katalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	renamed := t.TempDir()
	write(t, filepath.Join(renamed, "crd.yaml"), strings.Replace(string(crd), "image:", "containerImage:", 1))
	write(t, filepath.Join(renamed, "katalog.yaml"), strings.Replace(string(kat), "crFiles: [./cr.yaml]", "", 1))
	wants := map[Lang]string{
		Go:         "Image",
		Python:     `"image"`,
		TypeScript: "'image'",
	}
	for _, lang := range Langs() {
		t.Run(string(lang), func(t *testing.T) {
			if out, err := check(t, load(t, katalogs["remote"]), lang); err != nil {
				t.Fatalf("before the rename: %v\n%s", err, out)
			}
			out, err := check(t, load(t, filepath.Join(renamed, "katalog.yaml")), lang)
			if err == nil {
				t.Fatalf("after the rename the use still type-checks:\n%s", out)
			}
			if !strings.Contains(out, wants[lang]) {
				t.Errorf("the failure does not name the field (%s):\n%s", wants[lang], out)
			}
		})
	}
}
