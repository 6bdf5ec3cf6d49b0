package resources

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"
)

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
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
			if !slices.Contains(opt, m) {
				t.Errorf("%s: optional fields %v lack %q", ti.Type, opt, m)
			}
		}
	}
}

// TestBuildTakesJSONEntries builds the seed's example result entries decoded the two ways a
// JSON body can be (float64 and json.Number) and expects identical objects, and an input
// left as it was.
func TestBuildTakesJSONEntries(t *testing.T) {
	body := `[
	  {"type": "deployment", "fields": {"name": "my-webapp", "image": "nginx:latest", "replicas": 2, "port": 8080}, "forceConflict": true},
	  {"type": "service", "fields": {"name": "my-webapp-svc", "port": 80, "targetPort": 8080}},
	  {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "my-app"}, "spec": {"replicas": 2,
	    "selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}},
	    "spec": {"containers": [{"name": "a", "image": "nginx"}]}}}}
	]`
	decode := func(useNumber bool) []map[string]any {
		dec := json.NewDecoder(strings.NewReader(body))
		if useNumber {
			dec.UseNumber()
		}
		var entries []map[string]any
		if err := dec.Decode(&entries); err != nil {
			t.Fatal(err)
		}
		return entries
	}
	floats, numbers := decode(false), decode(true)
	for i := range floats {
		before := decode(false)[i]
		a, err := Build(floats[i], testOptions())
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		b, err := Build(numbers[i], testOptions())
		if err != nil {
			t.Fatalf("entry %d (json.Number): %v", i, err)
		}
		if d := cmp.Diff(a.Obj.Object, b.Obj.Object); d != "" {
			t.Errorf("entry %d: float64 and json.Number decoding differ:\n%s", i, d)
		}
		if d := cmp.Diff(before, floats[i]); d != "" {
			t.Errorf("entry %d: Build changed its input:\n%s", i, d)
		}
		if i == 0 && (a.ForceConflict == nil || !*a.ForceConflict) {
			t.Errorf("entry 0: ForceConflict = %v, want true", a.ForceConflict)
		}
		// A deep copy panics on value types apimachinery does not know; it must not.
		_ = a.Obj.DeepCopy()
	}
}
