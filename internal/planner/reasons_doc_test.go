package planner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// reasonConst is a constant that names a condition, a condition's reason or an Event's:
// Reason*, Event* or Condition*, with a CamelCase value.
var (
	reasonConst = regexp.MustCompile(`^(Reason|Event|Condition)[A-Z]`)
	camelCase   = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
)

// docs/troubleshooting.md lists every condition and every reason ork writes to a condition
// or an Event: each such constant of the packages that write them is in its last section.
func TestTroubleshootingListsEveryReason(t *testing.T) {
	doc, err := os.ReadFile("../../docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Every reason ork writes\n")
	if !ok {
		t.Fatal(`docs/troubleshooting.md has no section "## Every reason ork writes"`)
	}
	var dirs []string
	for _, glob := range []string{"../planner", "../run", "../run/*", "../remote", "../rollout", "../declarative"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, m...)
	}
	found := map[string]string{} // value -> where
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !reasonConst.MatchString(name.Name) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, _ := strconv.Unquote(lit.Value)
						if camelCase.MatchString(v) {
							found[v] = f + ": " + name.Name
						}
					}
				}
			}
		}
	}
	if len(found) < 20 {
		t.Fatalf("found %d reasons, want the packages' full vocabulary: %v", len(found), found)
	}
	var missing []string
	for v, where := range found {
		if !strings.Contains(section, "| `"+v+"` |") {
			missing = append(missing, v+" ("+where+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("docs/troubleshooting.md, section \"Every reason ork writes\", lacks a row for %s", m)
	}
}
