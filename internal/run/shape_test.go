package run

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The engine's shape: bounds on internal/run's own code that keep it the engine and not
// every feature (docs/architecture.md). A feature that grows it past them moves into a
// subpackage of internal/run that knows the engine through narrow Deps and callbacks.
const (
	maxEngineLines      = 5000
	maxControllerFields = 16
	maxEngineMethods    = 24
)

const shapeHint = "move a feature into a subpackage of internal/run behind Deps and callbacks " +
	"(as run/targetpass, run/relatedwatch, run/childwrite do), and add it to docs/architecture.md"

// internal/run's own non-test code stays within maxEngineLines; its controller keeps at
// most maxControllerFields named fields and embeds none; the Engine has at most
// maxEngineMethods methods.
func TestEngineShape(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	lines, methods := 0, 0
	var controller *ast.StructType
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && receiverName(d.Recv.List[0].Type) == "Engine" {
					methods++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "controller" {
						controller, _ = ts.Type.(*ast.StructType)
					}
				}
			}
		}
	}
	if lines > maxEngineLines {
		t.Errorf("internal/run has %d lines of non-test Go, more than %d: %s", lines, maxEngineLines, shapeHint)
	}
	if methods > maxEngineMethods {
		t.Errorf("Engine has %d methods, more than %d: %s", methods, maxEngineMethods, shapeHint)
	}
	if controller == nil {
		t.Fatal("no controller struct in internal/run")
	}
	fields := 0
	for _, f := range controller.Fields.List {
		if len(f.Names) == 0 {
			t.Errorf("controller embeds %s: hold it as a named field, or %s", typeName(f.Type), shapeHint)
		}
		fields += max(len(f.Names), 1)
	}
	t.Logf("internal/run: %d lines of non-test Go, controller %d fields, Engine %d methods", lines, fields, methods)
	if fields > maxControllerFields {
		t.Errorf("controller has %d fields, more than %d: %s", fields, maxControllerFields, shapeHint)
	}
}

// receiverName is the type name of a method's receiver, without its pointer.
func receiverName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// typeName names an embedded field's type for the message.
func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		return "*" + typeName(s.X)
	}
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return typeName(sel.X) + "." + sel.Sel.Name
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "a type"
}
