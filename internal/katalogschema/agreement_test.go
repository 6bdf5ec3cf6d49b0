package katalogschema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/validate"
	"github.com/orkspace/ork/schema"
)

// goldenCase is one Katalog of the repository's tests or examples: its files, read from dir.
type goldenCase struct {
	name  string
	dir   string
	files []string
}

// goldenCases lists testdata/validate's valid and invalid cases (NAME.yaml, or a directory
// NAME/ of files given together), the examples, and the Katalogs of other packages' tests.
func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	var out []goldenCase
	for _, kind := range []string{"valid", "invalid"} {
		dir, err := filepath.Abs(filepath.Join("../../testdata/validate", kind))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			c := goldenCase{name: kind + "/" + e.Name(), dir: dir, files: []string{e.Name()}}
			switch {
			case e.IsDir():
				c.files, _ = filepath.Glob(filepath.Join(dir, e.Name(), "*.yaml"))
			case !strings.HasSuffix(e.Name(), ".yaml"):
				continue
			}
			out = append(out, c)
		}
	}
	// The examples and the other packages' test Katalogs.
	var more []string
	for _, pattern := range []string{"../../examples/*/katalog.yaml", "../*/testdata/*.katalog.yaml",
		"../*/testdata/*/katalog.yaml", "../cli/testdata/*/*.yaml"} {
		m, _ := filepath.Glob(pattern)
		more = append(more, m...)
	}
	for _, k := range more {
		dir, _ := filepath.Abs(filepath.Dir(k))
		name := strings.TrimPrefix(filepath.ToSlash(k), "../../")
		out = append(out, goldenCase{name: strings.TrimPrefix(name, "../"), dir: dir, files: []string{filepath.Base(k)}})
	}
	return out
}

// The schema and ork validate judge every golden Katalog alike wherever the rule is one a
// schema can express (katalog.RuleInfo.Schema): the schema rejects a Katalog exactly when
// validate reports an error of such a rule, each such error has a schema error at or around
// its path, and each schema error stands where validate reports some error.
func TestSchemaAgreesWithValidate(t *testing.T) {
	v, err := NewValidator(mustRead(t, schemaFile))
	if err != nil {
		t.Fatal(err)
	}
	cases := goldenCases(t)
	if len(cases) < 50 {
		t.Fatalf("found %d golden Katalogs, want the valid and invalid suites and the examples", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(c.dir)
			set, findings, err := katalog.Load(c.files)
			if err != nil {
				t.Fatal(err)
			}
			findings = append(findings, validate.Katalog(set)...)
			var structural, errs []katalog.Finding
			for _, f := range findings {
				if f.Severity != katalog.SeverityError {
					continue
				}
				errs = append(errs, f)
				if info, _ := f.Rule.Info(); info.Schema {
					structural = append(structural, f)
				}
			}
			var schemaErrs []error
			var leaves [][]string
			for _, file := range c.files {
				if err := v.Check(mustRead(t, file)); err != nil {
					schemaErrs = append(schemaErrs, fmt.Errorf("%s: %w", file, err))
					leaves = append(leaves, leafLocations(err)...)
				}
			}
			rejected := len(schemaErrs) > 0
			if rejected != (len(structural) > 0) {
				t.Fatalf("schema rejects: %v; validate's errors of schema rules: %d\nvalidate: %s\nschema: %v",
					rejected, len(structural), describe(findings), errors.Join(schemaErrs...))
			}
			if len(leaves) == 0 {
				return // no document to locate errors in: YAML that does not parse, or has no JSON form
			}
			for _, f := range structural {
				if !slices.ContainsFunc(leaves, func(l []string) bool { return related(l, findingLocation(f)) }) {
					t.Errorf("validate's %s error at %s (%s) has no schema error there; schema: %v",
						f.Rule, f.Path, f.Message, errors.Join(schemaErrs...))
				}
			}
			for _, l := range leaves {
				if !slices.ContainsFunc(errs, func(f katalog.Finding) bool { return related(l, findingLocation(f)) }) {
					t.Errorf("the schema rejects /%s, where validate reports no error: %v\nvalidate: %s",
						strings.Join(l, "/"), errors.Join(schemaErrs...), describe(findings))
				}
			}
		})
	}
}

// The schema in schema/ is the one ork embeds and `ork schema katalog` prints.
func TestEmbeddedSchemaIsTheFile(t *testing.T) {
	if got := schema.Katalog(); string(got) != string(mustRead(t, schemaFile)) {
		t.Error("schema.Katalog() differs from schema/katalog.schema.json")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leafLocations are the instance locations of the innermost errors of a schema verdict.
func leafLocations(err error) [][]string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var out [][]string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, e.InstanceLocation)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

var index = regexp.MustCompile(`\[(\d+)\]`)

// findingLocation is a finding's path as a schema instance location: crds.web.x[0] is
// spec/crds/web/x/0.
func findingLocation(f katalog.Finding) []string {
	if f.Path == "" {
		return nil
	}
	p := index.ReplaceAllString(f.Path, ".$1")
	if strings.HasPrefix(p, "crds") {
		p = "spec." + p
	}
	return strings.Split(p, ".")
}

// related reports whether one location lies within the other.
func related(a, b []string) bool {
	n := min(len(a), len(b))
	return slices.Equal(a[:n], b[:n])
}

func describe(fs []katalog.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %s [%s] %s: %s", f.Severity, f.Rule, f.Path, f.File, f.Message)
	}
	return b.String()
}
