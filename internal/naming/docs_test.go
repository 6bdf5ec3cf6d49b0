package naming_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/naming"
)

const namingDoc = "../../docs/naming.md"

// Every name of the table in code is in docs/naming.md: the string constants by value, the
// name functions by the pattern the page writes (each checked against the function).
func TestEveryNameIsInTheDoc(t *testing.T) {
	doc := readDoc(t)
	consts, funcs := declared(t)
	for name, value := range consts {
		if !strings.Contains(doc, value) {
			t.Errorf("naming.%s = %q is not in %s", name, value, namingDoc)
		}
	}
	// patterns are how docs/naming.md writes each function's names; got is the function
	// given the placeholders (numbers become <i> and <B>).
	patterns := map[string]struct{ got, doc string }{
		"BucketLeaseName":              {placeholders(naming.BucketLeaseName("<name>", 3, 16)), "<name>-bucket-<i>-of-<B>"},
		"MemberLeaseName":              {naming.MemberLeaseName("<name>", "<pod>"), "<name>-member-<pod>"},
		"RolloutConfigMapName":         {naming.RolloutConfigMapName("<name>"), "<name>-rollout"},
		"MetricsServiceName":           {naming.MetricsServiceName("<name>"), "<name>-metrics"},
		"TargetRoleName":               {naming.TargetRoleName("<name>"), "<name>-target"},
		"LeaderElectionFlowSchemaName": {naming.LeaderElectionFlowSchemaName("<name>"), "<name>-leader-election"},
		// The parsers and checks of the names above name nothing themselves.
		"ParseBucketLeaseName": {}, "IsMemberLeaseName": {}, "ValidBuckets": {},
		"SlotOf": {fmt.Sprintf("%d hex digits", len(naming.SlotOf("uid"))), "2 hex digits"},
	}
	for _, f := range funcs {
		p, ok := patterns[f]
		switch {
		case !ok:
			t.Errorf("naming.%s: add the pattern docs/naming.md writes for it to this test", f)
		case p.got != p.doc:
			t.Errorf("naming.%s gives %q, the test's pattern is %q", f, p.got, p.doc)
		case p.doc != "" && !strings.Contains(doc, p.doc):
			t.Errorf("naming.%s: %q is not in %s", f, p.doc, namingDoc)
		}
	}
}

// Every label and annotation key docs/naming.md lists under ork's prefix (or the
// app.kubernetes.io labels ork writes) is a constant of the table in code.
func TestEveryNameInTheDocIsInTheTable(t *testing.T) {
	consts, _ := declared(t)
	values := map[string]bool{}
	for _, v := range consts {
		values[v] = true
	}
	keys := regexp.MustCompile(`(orkestra\.orkspace\.io|ork\.orkspace\.io|app\.kubernetes\.io)/[a-z0-9-]+`)
	for _, k := range keys.FindAllString(readDoc(t), -1) {
		if !values[k] {
			t.Errorf("%s names %s, which no constant of internal/naming holds", namingDoc, k)
		}
	}
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(namingDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// placeholders writes bucket 3 of 16 as <i> and <B>.
func placeholders(s string) string {
	return strings.NewReplacer("-3-", "-<i>-", "-16", "-<B>").Replace(s)
}

// declared reads the package's own source: its exported string constants with their values
// (literals, or sums of literals and other constants) and its exported functions.
func declared(t *testing.T) (consts map[string]string, funcs []string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	exprs := map[string]ast.Expr{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					funcs = append(funcs, d.Name.Name)
				}
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						exprs[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	var eval func(ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		case *ast.Ident:
			return eval(exprs[e.Name])
		case *ast.BinaryExpr:
			l, lok := eval(e.X)
			r, rok := eval(e.Y)
			return l + r, lok && rok && e.Op == token.ADD
		}
		return "", false
	}
	consts = map[string]string{}
	for n, e := range exprs {
		// Prefix is part of every name, not a name; numbers (MinBuckets) are not names.
		if v, ok := eval(e); ok && ast.IsExported(n) && n != "Prefix" {
			consts[n] = v
		}
	}
	if len(consts) == 0 || len(funcs) == 0 {
		t.Fatalf("read no constants or functions from %v", files)
	}
	return consts, funcs
}
