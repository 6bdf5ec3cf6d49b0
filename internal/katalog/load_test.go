package katalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func findingAt(fs []Finding, path string) (Finding, bool) {
	for _, f := range fs {
		if f.Path == path {
			return f, true
		}
	}
	return Finding{}, false
}

func TestStructuralProblemsAreAllReportedAndTheRestDecodes(t *testing.T) {
	src := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    web:
      apiTypes: {group: myorg.io, version: v1, kind: Web, plural: webs}
      operatorBox:
        reconcile:
          default: false
          workers: four
          remote:
            endpoint: https://r.example/reconcile
            managedResource: []
            timeout: 5
`
	set, findings := Decode(Source{Path: "k.yaml", Data: []byte(src)})
	want := map[string]struct {
		line int
		msg  string
		hint string
	}{
		"crds.web.operatorBox.reconcile.workers":                {10, `expected an integer, got a string "four"`, "use a whole number without quotes"},
		"crds.web.operatorBox.reconcile.remote.managedResource": {13, `unknown field "managedResource"`, "did you mean `managedResources`?"},
		"crds.web.operatorBox.reconcile.remote.timeout":         {14, `expected a string, got an integer "5"`, "a Go duration with its unit, such as 30s or 10m"},
	}
	if len(findings) != len(want) {
		t.Errorf("got %d findings, want %d: %+v", len(findings), len(want), findings)
	}
	for path, w := range want {
		f, ok := findingAt(findings, path)
		if !ok {
			t.Errorf("no finding at %s", path)
			continue
		}
		if f.Line != w.line || f.Message != w.msg || f.Hint != w.hint || f.File != "k.yaml" || f.Severity != SeverityError {
			t.Errorf("finding at %s = %+v, want line %d %q (hint %q)", path, f, w.line, w.msg, w.hint)
		}
	}
	// Everything that was right still decoded: semantic checks run on it in the same pass.
	c := set.CRD("web")
	if c == nil || c.OperatorBox.Reconcile.Remote == nil || c.OperatorBox.Reconcile.Remote.Endpoint != "https://r.example/reconcile" {
		t.Fatalf("CRD web did not decode around the bad nodes: %+v", c)
	}
	if c.OperatorBox.Reconcile.DefaultEnabled() {
		t.Error("default: false decoded as enabled")
	}
}

func TestSyntaxErrorCarriesItsLine(t *testing.T) {
	_, findings := Decode(Source{Path: "k.yaml", Data: []byte("kind: Katalog\nmetadata: {}\nspec: crds: x\n")})
	if len(findings) != 1 || findings[0].Line != 3 || !strings.Contains(findings[0].Message, "YAML syntax error") {
		t.Fatalf("findings = %+v, want one YAML syntax error at line 3", findings)
	}
}

func TestCRDFileFillsAPITypesAndReportsConflicts(t *testing.T) {
	dir := t.TempDir()
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webs.myorg.io}
spec:
  group: myorg.io
  scope: Cluster
  names: {kind: Web, plural: webs}
  versions: [{name: v1, served: true, storage: true}]
`
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    inferred:
      crdFile: ./crd.yaml
    conflicting:
      crdFile: ./crd.yaml
      apiTypes: {kind: Other}
      namespaced: true
`
	path := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(path, []byte(k), 0o600); err != nil {
		t.Fatal(err)
	}
	set, findings, err := Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	in := set.CRD("inferred")
	if got := *in.APITypes; got != (APITypes{Group: "myorg.io", Version: "v1", Kind: "Web", Plural: "webs"}) {
		t.Errorf("inferred apiTypes = %+v", got)
	}
	if in.IsNamespaced() {
		t.Error("scope Cluster inferred as namespaced")
	}
	for _, p := range []string{"crds.conflicting.apiTypes.kind", "crds.conflicting.namespaced"} {
		if f, ok := findingAt(findings, p); !ok || f.Line == 0 {
			t.Errorf("no located conflict finding at %s: %+v", p, findings)
		}
	}
}

func TestDuplicateCRDAcrossFiles(t *testing.T) {
	doc := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    web:\n      apiTypes: {group: g, version: v1, kind: W, plural: ws}\n"
	set, findings := Decode(Source{Path: "a.yaml", Data: []byte(doc)}, Source{Path: "b.yaml", Data: []byte(doc)})
	if len(set.CRDs) != 1 {
		t.Errorf("CRDs = %d, want the first declaration only", len(set.CRDs))
	}
	f, ok := findingAt(findings, "crds.web")
	if !ok || f.File != "b.yaml" || f.Line != 5 || !strings.Contains(f.Message, "a.yaml:5") {
		t.Errorf("duplicate finding = %+v, want b.yaml:5 naming a.yaml:5", f)
	}
}

// An unreadable file is an error and a finding; the readable files are still decoded, so
// that a machine-readable report can hold everything.
func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	doc := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    web:\n      apiTypes: {group: g, version: v1, kind: W, plural: ws}\n"
	if err := os.WriteFile(good, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	set, findings, err := Load([]string{missing, good})
	if !errors.Is(err, ErrUnreadable) {
		t.Fatalf("err = %v, want ErrUnreadable", err)
	}
	if set == nil || set.CRD("web") == nil {
		t.Errorf("the readable file was not decoded: %+v", set)
	}
	if len(findings) != 1 || findings[0].Rule != RuleUnreadable || findings[0].File != missing ||
		findings[0].Severity != SeverityError || !strings.Contains(findings[0].Message, "no such file") {
		t.Errorf("findings = %+v, want one unreadable-file error for %s", findings, missing)
	}
}

// A duplicate key is reported at its second occurrence, and the first value is the one
// decoded, as the finding's hint says.
func TestDuplicateKeyKeepsTheFirst(t *testing.T) {
	doc := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    web:\n      apiTypes: {group: g, version: v1, kind: W, plural: ws}\n" +
		"      crFiles: [a.yaml]\n      crFiles: [b.yaml]\n"
	set, findings := Decode(Source{Path: "k.yaml", Data: []byte(doc)})
	if len(findings) != 1 || findings[0].Rule != RuleDuplicateKey || findings[0].Line != 8 || findings[0].Column != 7 ||
		findings[0].Message != `key "crFiles" is already set at line 7` {
		t.Fatalf("findings = %+v, want one duplicate-key at 8:7", findings)
	}
	if got := set.CRD("web").CRFiles; len(got) != 1 || got[0] != "a.yaml" {
		t.Errorf("crFiles = %v, want the first value [a.yaml]", got)
	}
}

// Another Kubernetes manifest given as the Katalog is one finding that says what it is.
func TestNotAKatalog(t *testing.T) {
	tests := []struct {
		name, doc, want string // want "" when the file is taken for a Katalog with a mistake
	}{
		{"CRD", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: g}\n",
			"this file is a CustomResourceDefinition, not a Katalog"},
		{"custom resource", "apiVersion: myorg.io/v1\nkind: WebApp\nspec: {image: x}\n",
			"this file is a WebApp (myorg.io/v1) custom resource, not a Katalog"},
		{"built-in object", "apiVersion: apps/v1\nkind: Deployment\nspec: {replicas: 1}\n",
			"this file is a Deployment (apps/v1), not a Katalog"},
		{"built-in object of a dotted group", "apiVersion: networking.k8s.io/v1\nkind: Ingress\n",
			"this file is an Ingress (networking.k8s.io/v1), not a Katalog"},
		{"a Katalog with a misspelt kind", "apiVersion: orkestra.orkspace.io/v1\nkind: Catalog\nspec: {crds: {}}\n", ""},
		{"a Katalog without kind", "apiVersion: v1\nspec: {crds: {}}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, findings := Decode(Source{Path: "f.yaml", Data: []byte(tt.doc)})
			var got []Finding
			for _, f := range findings {
				if f.Rule == RuleNotAKatalog {
					got = append(got, f)
				}
			}
			if tt.want == "" {
				if len(got) > 0 {
					t.Errorf("not-a-katalog findings %+v, want none", got)
				}
				return
			}
			if len(findings) != 1 || len(got) != 1 || got[0].Message != tt.want || got[0].Line != 2 {
				t.Errorf("findings = %+v, want only %q at line 2", findings, tt.want)
			}
		})
	}
}

// A YAML syntax error stands at the offending token, also deep in a long file, where the
// parser's own message names the enclosing block's line.
func TestSyntaxErrorAtTheOffendingToken(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "    crd%d:\n      apiTypes: {group: g, version: v1, kind: K, plural: ks}\n", i)
	}
	b.WriteString("    bad:\n      crFiles: [a.yaml]\n     apiTypes: {group: g}\n") // one space short
	_, findings := Decode(Source{Path: "long.yaml", Data: []byte(b.String())})
	if len(findings) != 1 || findings[0].Rule != RuleYAMLSyntax || findings[0].Line != 2007 || findings[0].Column != 6 ||
		findings[0].Message != "YAML syntax error: did not find expected key" {
		t.Fatalf("findings = %+v, want one yaml-syntax at 2007:6", findings)
	}
}
