package resources

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}

func testOptions() Options { return OptionsFor("default", "my-cr") }

// TestBuildGolden builds every testdata/build/*.yaml entry (decoded as a Katalog's YAML is,
// numbers as float64) and compares the object with its .golden file.
func TestBuildGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "build", "*.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := sigsyaml.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			o, err := Build(raw, testOptions())
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			out, err := sigsyaml.Marshal(o.Obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			force := "unset"
			if o.ForceConflict != nil {
				force = fmt.Sprint(*o.ForceConflict)
			}
			gr := o.GroupResource()
			header := fmt.Sprintf("# type: %s, group: %q, resource: %q, forceConflict: %s\n",
				o.Type.Type, gr.Group, gr.Resource, force)
			golden(t, filepath.Join("build", name+".golden"), append([]byte(header), out...))
		})
	}
}

// TestEveryTypeHasAGolden keeps the golden set complete as types are added.
func TestEveryTypeHasAGolden(t *testing.T) {
	for _, ti := range Types() {
		matches, _ := filepath.Glob(filepath.Join("testdata", "build", ti.Type+"*.yaml"))
		if len(matches) == 0 {
			t.Errorf("type %q has no testdata/build/%s*.yaml case", ti.Type, ti.Type)
		}
	}
}

// TestFieldsMatchTheTable checks that every type in the table has fields and that name is
// required everywhere.
func TestFieldsMatchTheTable(t *testing.T) {
	for _, ti := range Types() {
		req, opt := ti.Fields()
		if len(req) == 0 || (req[0] != "name" && ti.Type != Custom) {
			t.Errorf("%s: required = %v, want name first", ti.Type, req)
		}
		for _, m := range []string{"namespace", "labels", "annotations"} {
			if !contains(opt, m) {
				t.Errorf("%s: optional fields %v lack %q", ti.Type, opt, m)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
