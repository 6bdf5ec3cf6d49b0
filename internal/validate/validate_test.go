package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"

	"github.com/orkspace/ork/internal/apiresources"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/validate"
)

const testdata = "../../testdata/validate"

// run checks files the way `ork validate` does: load, then validate, all findings sorted.
func run(t *testing.T, files ...string) []katalog.Finding {
	t.Helper()
	set, findings, err := katalog.Load(files)
	if err != nil {
		t.Fatalf("load %v: %v", files, err)
	}
	findings = append(findings, validate.Katalog(set)...)
	katalog.SortFindings(findings)
	return findings
}

// format renders findings as the golden files hold them, one per line, like the CLI, with
// each finding's rule id after its severity.
func format(fs []katalog.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s:%d:%d: %s [%s]: ", filepath.ToSlash(f.File), f.Line, f.Column, f.Severity, f.Rule)
		if f.Path != "" {
			b.WriteString(f.Path + ": ")
		}
		b.WriteString(f.Message)
		if f.Hint != "" {
			fmt.Fprintf(&b, " (hint: %s)", f.Hint)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type testCase struct {
	name  string
	files []string
}

// cases lists the cases of the current directory: NAME.yaml is one file, and a directory
// NAME/ is one case loading all its *.yaml files in order, as repeated -f flags would.
func cases(t *testing.T) []testCase {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []testCase
	for _, e := range entries {
		name, isYAML := strings.CutSuffix(e.Name(), ".yaml")
		switch {
		case e.IsDir():
			files, err := filepath.Glob(filepath.Join(e.Name(), "*.yaml"))
			if err != nil || len(files) == 0 {
				t.Fatalf("case directory %s holds no .yaml files", e.Name())
			}
			out = append(out, testCase{e.Name(), files})
		case isYAML:
			out = append(out, testCase{name, []string{e.Name()}})
		}
	}
	return out
}

func TestValidKatalogsHaveNoFindings(t *testing.T) {
	t.Chdir(filepath.Join(testdata, "valid"))
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			if fs := run(t, tc.files...); len(fs) > 0 {
				t.Errorf("want no findings, got:\n%s", format(fs))
			}
		})
	}
}

func TestExamplesValidateClean(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/katalog.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("want the remote and website examples, found %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			if fs := run(t, f); len(fs) > 0 {
				t.Errorf("want no findings, got:\n%s", format(fs))
			}
		})
	}
}

// TestInvalidKatalogs compares each case's findings with NAME.golden; go test -update
// rewrites the goldens (read the diff before committing it).
func TestInvalidKatalogs(t *testing.T) {
	t.Chdir(filepath.Join(testdata, "invalid"))
	all := cases(t)
	if len(all) < 30 {
		t.Errorf("%d invalid cases, want at least 30 covering every rule", len(all))
	}
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			fs := run(t, tc.files...)
			if len(fs) == 0 {
				t.Fatal("want findings, got none")
			}
			got := format(fs)
			goldenfile.Assert(t, tc.name+".golden", []byte(got))
		})
	}
}

func TestEveryGoldenHasACase(t *testing.T) {
	t.Chdir(filepath.Join(testdata, "invalid"))
	known := map[string]bool{}
	for _, tc := range cases(t) {
		known[tc.name] = true
	}
	goldens, err := filepath.Glob("*.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		if name := strings.TrimSuffix(g, ".golden"); !known[name] {
			t.Errorf("%s has no case %s.yaml or %s/", g, name, name)
		}
	}
}

// Every finding names its rule, with the rule's severity, and every rule but the internal
// decode check and the unreadable file has a case: SARIF and JUnit reports group by these IDs.
func TestEveryFindingNamesItsRule(t *testing.T) {
	t.Chdir(filepath.Join(testdata, "invalid"))
	seen := map[katalog.Rule]bool{}
	for _, tc := range cases(t) {
		for _, f := range run(t, tc.files...) {
			info, ok := f.Rule.Info()
			switch {
			case !ok:
				t.Errorf("%s: finding %q has no known rule (%q)", tc.name, f.Message, f.Rule)
			case info.Severity != f.Severity:
				t.Errorf("%s: finding %q is a %s, but rule %s is a %s", tc.name, f.Message, f.Severity, f.Rule, info.Severity)
			}
			seen[f.Rule] = true
		}
	}
	for _, r := range katalog.Rules() {
		// decode is internal; an unreadable file cannot be committed as a case (katalog's
		// TestUnreadableFile and testdata/script/validate_json.txtar cover it).
		if !seen[r.ID] && r.ID != katalog.RuleDecode && r.ID != katalog.RuleUnreadable {
			t.Errorf("rule %s has no case in %s/invalid", r.ID, testdata)
		}
	}
}

// A group listed with --api-resources (kubectl api-resources -o wide) is known: the
// unknown-api-group warning goes; a misspelt built-in type stays an error.
func TestAPIResourcesDeclareGroups(t *testing.T) {
	t.Chdir(filepath.Join(testdata, "invalid"))
	set, findings, err := katalog.Load([]string{"managed-unknown-group-warning.yaml"})
	if err != nil || len(findings) > 0 {
		t.Fatalf("load: %v %v", err, findings)
	}
	listed := &apiresources.Table{Resources: []apiresources.Resource{{Group: "example.com", Versions: []string{"v1"}, Plural: "widgets", Kind: "Widget", Namespaced: true}}}
	if fs := validate.KatalogWith(set, validate.Options{APIResources: listed}); len(fs) > 0 {
		t.Errorf("with example.com listed, want no findings, got:\n%s", format(fs))
	}
	if fs := validate.Katalog(set); len(fs) != 1 || fs[0].Rule != katalog.RuleUnknownAPIGroup {
		t.Errorf("without it, want the unknown-api-group warning, got:\n%s", format(fs))
	}
	set, _, err = katalog.Load([]string{"managed-builtin-misspelt.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if fs := validate.KatalogWith(set, validate.Options{APIResources: listed}); len(fs) != 6 {
		t.Errorf("want the 6 errors of the golden, got:\n%s", format(fs))
	}
}
