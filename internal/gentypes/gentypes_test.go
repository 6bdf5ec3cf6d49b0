package gentypes

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/katalog"
)

// katalogs are the Katalogs of the golden tests: each writes testdata/<name>/<FileName>.
var katalogs = map[string]string{
	"remote":  "../../examples/remote/katalog.yaml",
	"related": "../../examples/related/katalog.yaml",
	"shop":    "testdata/shop/katalog.yaml",
}

func load(t *testing.T, path string) *katalog.Set {
	t.Helper()
	set, findings, err := katalog.Load([]string{path})
	if err != nil || katalog.HasErrors(findings) {
		t.Fatalf("load %s: %v %v", path, err, findings)
	}
	return set
}

func TestGenerateGolden(t *testing.T) {
	for name, path := range katalogs {
		set := load(t, path)
		for _, lang := range Langs() {
			t.Run(name+"/"+string(lang), func(t *testing.T) {
				got, err := Generate(set, Options{Lang: lang})
				if err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, filepath.Join("testdata", name, FileName(lang)), got)
			})
		}
	}
}

// The same Katalog gives the same bytes, though the CRD schema's properties and the args
// are Go maps.
func TestGenerateIsDeterministic(t *testing.T) {
	set := load(t, katalogs["shop"])
	for _, lang := range Langs() {
		first, err := Generate(set, Options{Lang: lang})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			again, _ := Generate(load(t, katalogs["shop"]), Options{Lang: lang})
			if !bytes.Equal(first, again) {
				t.Fatalf("%s: two generations differ", lang)
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Lang: Go}, ""},
		{Options{Lang: Go, Package: "webapp"}, ""},
		{Options{Lang: "rust"}, `language "rust": want go, python or ts`},
		{Options{Lang: Go, Package: "my-types"}, `package "my-types" is not a Go identifier`},
		{Options{Lang: Go, Package: "func"}, `package "func" is not a Go identifier`},
	} {
		err := tc.opts.Validate()
		if got := errText(err); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opts, got, tc.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// An arg that is a bare field reference takes the field's type, nullable when the field can
// be missing; anything else that is a template is text.
func TestArgTypes(t *testing.T) {
	got, err := Generate(load(t, katalogs["shop"]), Options{Lang: TypeScript})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  replicas: number | null;",
		"  tier: StoreSpecTier;",
		"  name: string;",
		"  region: string;",
		"  port: number | string | null;",
		"  greeting: string;",
		"  missing: unknown | null;",
		"  items: string | null;",
		"  literal: string;",
		"  number: number;",
		"  debug: boolean;",
		"  settings: ConfigMap[];",
		"  carts: Cart[];",
		"  pods: Array<{ [key: string]: unknown }>;",
	} {
		if !strings.Contains(string(got), want+"\n") {
			t.Errorf("ork-types.ts lacks %q", want)
		}
	}
}
