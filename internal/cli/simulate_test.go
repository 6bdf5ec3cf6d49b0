package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/orkspace/ork/internal/output"
)

// runOrk runs the CLI in-process and returns its exit code, stdout and stderr.
func runOrk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, output.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// TestSimulateRemoteNoteIsByteExact pins the seed's note, em dash included, on stdout; the
// next step, the command that simulates the remote CRD with the secret.yaml beside the
// Katalog, goes to stderr.
func TestSimulateRemoteNoteIsByteExact(t *testing.T) {
	code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/remote/katalog.yaml")
	want := "webapp:\n" +
		"note: remote reconciler \xe2\x80\x94 skipping (dispatches to an external endpoint at runtime)\n"
	if code != 0 || out != want || errOut != remoteNext {
		t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit 0, stdout %q, stderr %q", code, out, errOut, want, remoteNext)
	}
}

// remoteNext is what ork simulate says on stderr after skipping the remote example's CRD.
const remoteNext = "next: with the reconciler running, simulate it: ork simulate -f ../../examples/remote/katalog.yaml --remote " +
	"--secrets ../../examples/remote/secret.yaml (ork remote check takes the same -f and --secrets and judges each answer)\n"

// nothingSimulated is the note of a non-text format when no custom resource was simulated.
const nothingSimulated = "note: nothing simulated: no custom resource had a reconcile to simulate (--strict makes this exit 1)\n"

// With -o plan and no custom resource to plan, stderr says so; --strict fails the run.
func TestSimulateNothingToPlanFailsUnderStrict(t *testing.T) {
	code, _, errOut := runOrk(t, "simulate", "-f", "../../examples/remote/katalog.yaml", "-o", "plan")
	if code != 0 || !strings.HasSuffix(errOut, nothingSimulated) {
		t.Errorf("exit %d, stderr %q; want exit 0 and the note", code, errOut)
	}
	code, _, errOut = runOrk(t, "simulate", "-f", "../../examples/remote/katalog.yaml", "-o", "plan", "--strict")
	if code != ExitFailed || !strings.HasSuffix(errOut, "error: --strict: no custom resource was simulated\n") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the error", code, errOut)
	}
	if code, _, _ := runOrk(t, "simulate", "-f", "../../examples/website/katalog.yaml", "-o", "plan", "--strict"); code != 0 {
		t.Errorf("a simulated custom resource under --strict: exit %d, want 0", code)
	}
}

func TestSimulateWebsiteText(t *testing.T) {
	code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/website/katalog.yaml")
	want := `website:
  websites/my-site in default (../../examples/website/cr.yaml)
    cycle 1:
      + deployments/my-site
      + services/my-site
    cycles 2-3: no changes
    steady state at cycle 3
`
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("stdout (-want +got):\n%s", d)
	}
}

func TestSimulateMixedKatalogText(t *testing.T) {
	code, out, _ := runOrk(t, "simulate", "-f", "../simulate/testdata/mixed/katalog.yaml", "--cycles", "5")
	want := `blog:
  blogs/news in default (../simulate/testdata/mixed/crs.yaml)
    cycle 1:
      + deployments/news
      + services/news
      ~ configmaps/news-banner
    cycles 2-3: no changes
    steady state at cycle 3
    on delete:
      - configmaps/news-settings
  blogs/recipes in default (../simulate/testdata/mixed/crs.yaml)
    cycle 1:
      + configmaps/recipes-settings
      + deployments/recipes
      + services/recipes
      + configmaps/recipes-banner
    cycles 2-3: no changes
    steady state at cycle 3
    on delete:
      - configmaps/recipes-settings

webapp:
` + remoteNote + "\n"
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("stdout (-want +got):\n%s", d)
	}
}

// TestSimulateObjectsOutput checks that -o yaml and -o json carry exactly the final objects
// (stdout stays machine-readable; notes go to stderr).
func TestSimulateObjectsOutput(t *testing.T) {
	kinds := []string{"Website", "Deployment", "Service"}
	t.Run("yaml", func(t *testing.T) {
		code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/website/katalog.yaml", "-o", "yaml")
		if code != 0 || errOut != "" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
		var got []string
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); err != nil {
				break
			}
			got = append(got, u.GetKind())
		}
		if d := cmp.Diff(kinds, got); d != "" {
			t.Errorf("kinds (-want +got):\n%s\n%s", d, out)
		}
	})
	t.Run("json", func(t *testing.T) {
		code, out, _ := runOrk(t, "simulate", "-f", "../../examples/website/katalog.yaml", "-o", "json")
		var list unstructured.UnstructuredList
		if err := list.UnmarshalJSON([]byte(out)); err != nil || code != 0 {
			t.Fatalf("exit %d, decode: %v\n%s", code, err, out)
		}
		var got []string
		for _, u := range list.Items {
			got = append(got, u.GetKind())
		}
		if d := cmp.Diff(kinds, got); d != "" {
			t.Errorf("kinds (-want +got):\n%s", d)
		}
	})
	t.Run("remote notes go to stderr", func(t *testing.T) {
		code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/remote/katalog.yaml", "-o", "json")
		var list map[string]any
		if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 {
			t.Fatalf("exit %d, stdout not JSON: %v\n%s", code, err, out)
		}
		if !strings.Contains(errOut, remoteNote+"\n") {
			t.Errorf("stderr %q lacks the note", errOut)
		}
	})
}

func TestSimulateFailures(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		stderr   []string
		noStdout bool
	}{
		{"render error names the template's location",
			[]string{"-f", "../simulate/testdata/broken/katalog.yaml"}, ExitFailed,
			[]string{"error: simulate app apps/tug: ../simulate/testdata/broken/katalog.yaml:14: ",
				"template reads .spec.imageName, which the custom resource lacks", `{{ index .spec "imageName" | default "…" }}`}, false},
		{"invalid Katalog prints findings like validate",
			[]string{"-f", "testdata/simulate/invalid.yaml"}, ExitFailed,
			[]string{"testdata/simulate/invalid.yaml:", ": error: ", "reconcile.remote requires reconcile.default: false",
				"invalid: 1 error"}, true},
		{"no steady state",
			[]string{"-f", "../simulate/testdata/flapping/katalog.yaml", "--cycles", "3"}, ExitFailed,
			[]string{"error: no steady state after 3 cycles: app apps/tug"}, false},
		{"too few cycles to see a steady state says so",
			[]string{"-f", "../../examples/website/katalog.yaml", "--cycles", "2"}, ExitFailed,
			[]string{"error: no steady state after 2 cycles: website websites/my-site", "use --cycles 3 or more"}, false},
		{"unknown CRD",
			[]string{"-f", "../../examples/website/katalog.yaml", "--crd", "websites"}, ExitUsage,
			[]string{`--crd: no CRD "websites" in the Katalog (did you mean "website"?)`}, true},
		{"cycles below one",
			[]string{"-f", "../../examples/website/katalog.yaml", "--cycles", "0"}, ExitUsage,
			[]string{"--cycles: want at least 1, got 0"}, true},
		{"unreadable Katalog",
			[]string{"-f", "testdata/simulate/missing.yaml"}, ExitUsage,
			[]string{"load katalog:"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runOrk(t, append([]string{"simulate"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q\nlacks %q", errOut, w)
				}
			}
			if tt.noStdout && out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// One CR's render error does not lose the others' results: they are printed, then the error.
func TestSimulatePrintsTheOtherCRsDespiteARenderError(t *testing.T) {
	code, out, errOut := runOrk(t, "simulate", "-f", "../simulate/testdata/broken/katalog.yaml")
	if code != ExitFailed {
		t.Errorf("exit %d, want %d", code, ExitFailed)
	}
	for _, w := range []string{"apps/barge in default", "+ deployments/barge", "steady state at cycle", "apps/tug in default", "reconcile failed"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errOut, "simulate app apps/tug:") || strings.Contains(errOut, "barge") {
		t.Errorf("stderr %q: want tug's error only", errOut)
	}
}
