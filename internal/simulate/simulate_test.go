package simulate

import (
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/naming"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
)

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
}

func load(t *testing.T, path string) *katalog.Set {
	t.Helper()
	set, findings, err := katalog.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if katalog.HasErrors(findings) {
		t.Fatalf("findings: %v", findings)
	}
	return set
}

// TestRunGolden pins the whole report (cycles, steady state, final objects) per Katalog.
func TestRunGolden(t *testing.T) {
	tests := []struct {
		name, katalog string
		opts          Options
	}{
		{"website", "../../examples/website/katalog.yaml", Options{}},
		{"remote", "../../examples/remote/katalog.yaml", Options{}},
		{"mixed", "testdata/mixed/katalog.yaml", Options{}},
		{"flapping", "testdata/flapping/katalog.yaml", Options{Cycles: 4}},
		{"website-cr-override", "../../examples/website/katalog.yaml", Options{CRFile: "testdata/sites.yaml"}},
		{"mixed-one-crd", "testdata/mixed/katalog.yaml", Options{CRD: "webapp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(t.Context(), load(t, tt.katalog), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			out, err := sigsyaml.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".golden", out)
		})
	}
}

func TestWebsiteReachesSteadyState(t *testing.T) {
	rep, err := Run(t.Context(), load(t, "../../examples/website/katalog.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.CRDs[0].CRs[0]
	want := []Span{
		{From: 1, To: 1, Changes: []Change{{Create, "deployments/my-site"}, {Create, "services/my-site"}}},
		{From: 2, To: 3},
	}
	if d := cmp.Diff(want, cr.Spans()); d != "" {
		t.Errorf("spans (-want +got):\n%s", d)
	}
	if cr.SteadyAt != 3 {
		t.Errorf("SteadyAt = %d, want 3 (cycles 2 and 3 changed nothing)", cr.SteadyAt)
	}
}

func TestFlappingNeverSettles(t *testing.T) {
	rep, err := Run(t.Context(), load(t, "testdata/flapping/katalog.yaml"), Options{Cycles: 5})
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.CRDs[0].CRs[0]
	if cr.SteadyAt != 0 || len(cr.Cycles) != 5 {
		t.Fatalf("SteadyAt = %d after %d cycles, want 0 after 5", cr.SteadyAt, len(cr.Cycles))
	}
	spans := cr.Spans()
	if len(spans) != 2 || spans[1].From != 2 || spans[1].To != 5 {
		t.Errorf("spans = %+v, want cycle 1 then cycles 2-5 collapsed", spans)
	}
}

// A render error is the failing CR's, with the template's file and line; the other CRs of
// the file are still reconciled to steady state.
func TestRenderErrorStaysWithItsCR(t *testing.T) {
	rep, err := Run(t.Context(), load(t, "testdata/broken/katalog.yaml"), Options{})
	if err != nil {
		t.Fatalf("Run: %v, want the error on the CR", err)
	}
	crs := map[string]CR{}
	for _, cr := range rep.CRDs[0].CRs {
		crs[cr.Name] = cr
	}
	tug, barge := crs["tug"], crs["barge"]
	for _, w := range []string{"testdata/broken/katalog.yaml:14:", `"imageName"`} {
		if !strings.Contains(tug.Err, w) {
			t.Errorf("tug's error %q lacks %q", tug.Err, w)
		}
	}
	if tug.SteadyAt != 0 {
		t.Errorf("tug SteadyAt = %d, want 0: it never reconciled", tug.SteadyAt)
	}
	if barge.Err != "" || barge.SteadyAt == 0 || len(barge.Cycles) == 0 || len(barge.Cycles[0].Changes) != 1 {
		t.Errorf("barge = %+v, want its deployment created and a steady state", barge)
	}
	if len(rep.Objects) != 3 { // both CRs and barge's Deployment
		t.Errorf("%d objects in the final cluster, want 3", len(rep.Objects))
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name, katalog string
		opts          Options
		want          []string
	}{
		{"CR file without a CR of the CRD", "../../examples/website/katalog.yaml",
			Options{CRFile: "testdata/flapping/cr.yaml"},
			[]string{`CRD "website": testdata/flapping/cr.yaml holds no Website (group myorg.io)`}},
		{"missing CR file", "../../examples/website/katalog.yaml", Options{CRFile: "testdata/nope.yaml"},
			[]string{"read CR file:", "nope.yaml"}},
		{"unknown CRD", "../../examples/website/katalog.yaml", Options{CRD: "webapp"},
			[]string{`no CRD "webapp" in the Katalog`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(t.Context(), load(t, tt.katalog), tt.opts)
			if err == nil {
				t.Fatal("Run succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestCustomChildrenLiveInTheCRNamespace(t *testing.T) {
	rep, err := Run(t.Context(), load(t, "testdata/custom-children/katalog.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	creates := map[string]int{}
	for _, c := range rep.CRDs {
		for _, cr := range c.CRs {
			for _, cy := range cr.Cycles {
				for _, ch := range cy.Changes {
					if ch.Op == Create {
						creates[cr.Ref]++
					}
				}
			}
		}
	}
	if len(creates) != 1 {
		t.Fatalf("creates by CR = %v, want exactly one CR (b) creating its post: a's post exists in a's namespace", creates)
	}
	for ref, n := range creates {
		if !strings.Contains(ref, "/b") || n != 1 {
			t.Errorf("creates by CR = %v, want one create for b", creates)
		}
	}
}

// A declarative CRD's children are planned by the planner ork run uses: owned (by reference,
// or by annotation across scopes), placed by their kind's scope, and refused where ork run
// refuses them.
func TestDeclarativeChildrenArePlannedAsOrkRunPlansThem(t *testing.T) {
	rep, err := Run(t.Context(), load(t, "testdata/declarative-scope/katalog.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var role *unstructured.Unstructured
	for _, o := range rep.Objects {
		if o.GetKind() == "ClusterRole" {
			role = o
		}
	}
	switch {
	case role == nil:
		t.Fatalf("no ClusterRole planned: %v", rep.Objects)
	case role.GetNamespace() != "" || len(role.GetOwnerReferences()) != 0 || role.GetAnnotations()[naming.OwnerAnnotation] == "":
		t.Errorf("ClusterRole of a CR in one: namespace %q, ownerReferences %v, annotations %v; want cluster-scoped, owned by annotation",
			role.GetNamespace(), role.GetOwnerReferences(), role.GetAnnotations())
	}
	for _, c := range rep.CRDs {
		for _, cr := range c.CRs {
			if c.Name == "zone" && !strings.Contains(cr.Err, "InvalidResource") {
				t.Errorf("zone %s: error %q, want InvalidResource (a ConfigMap of a cluster-scoped CR with no namespace)", cr.Name, cr.Err)
			}
		}
	}
}

// Under another ork run --name the children carry that operator label (and so another
// applied digest): simulate plans as the operator it is told.
func TestChildrenCarryTheOperatorName(t *testing.T) {
	rep, err := Run(t.Context(), load(t, "../../examples/website/katalog.yaml"), Options{Operator: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	var children int
	for _, o := range rep.Objects {
		if len(o.GetOwnerReferences()) == 0 {
			continue
		}
		children++
		if got := o.GetLabels()[naming.OperatorLabel]; got != "team-a" {
			t.Errorf("%s %s: operator label %q, want team-a", o.GetKind(), o.GetName(), got)
		}
	}
	if children == 0 {
		t.Fatal("no children planned")
	}
}
