package cli

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/simulate"
)

// -o plan is JSON for CI: per CR its cycles with what each creates or changes, and whether
// steady state was reached; every key present; the exit codes of the other formats.
func TestSimulatePlan(t *testing.T) {
	t.Run("steady", func(t *testing.T) {
		code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/website/katalog.yaml", "-o", "plan")
		if code != 0 || errOut != "" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var plan simulate.Plan
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatalf("stdout is no plan: %v\n%s", err, out)
		}
		want := simulate.Plan{Steady: true, CRDs: []simulate.PlanCRD{{Name: "website", CRs: []simulate.PlanCR{{
			File: "../../examples/website/cr.yaml", Namespace: "default", Name: "my-site", Ref: "websites/my-site",
			Cycles: []simulate.PlanCycle{
				{N: 1, Changes: []simulate.PlanChange{{Op: "create", Ref: "deployments/my-site"}, {Op: "create", Ref: "services/my-site"}}},
				{N: 2, Changes: []simulate.PlanChange{}},
				{N: 3, Changes: []simulate.PlanChange{}},
			},
			Steady: true, SteadyAt: 3, OnDelete: []simulate.PlanChange{}, Operations: []simulate.Operation{},
		}}}}}
		if d := cmp.Diff(want, plan); d != "" {
			t.Errorf("plan (-want +got):\n%s", d)
		}
		// The contract: every key present, empty lists as [].
		var raw map[string]any
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatal(err)
		}
		cr := raw["crds"].([]any)[0].(map[string]any)["crs"].([]any)[0].(map[string]any)
		for _, k := range []string{"file", "namespace", "name", "ref", "cycles", "steady", "steadyAt", "onDelete", "error"} {
			if _, ok := cr[k]; !ok {
				t.Errorf("crs[0] lacks %q", k)
			}
		}
		if ch := cr["cycles"].([]any)[1].(map[string]any)["changes"]; ch == nil {
			t.Errorf("cycles[1].changes is null, want []")
		}
	})
	t.Run("no steady state", func(t *testing.T) {
		code, out, errOut := runOrk(t, "simulate", "-f", "../simulate/testdata/flapping/katalog.yaml", "--cycles", "3", "-o", "plan")
		if code != ExitFailed {
			t.Fatalf("exit %d, want %d; stderr %q", code, ExitFailed, errOut)
		}
		var plan simulate.Plan
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatalf("stdout is no plan: %v\n%s", err, out)
		}
		cr := plan.CRDs[0].CRs[0]
		if plan.Steady || cr.Steady || cr.SteadyAt != 0 || len(cr.Cycles) != 3 {
			t.Errorf("plan: steady %v, CR steady %v at %d after %d cycles; want not steady after 3", plan.Steady, cr.Steady, cr.SteadyAt, len(cr.Cycles))
		}
		for _, cy := range cr.Cycles[1:] {
			if len(cy.Changes) == 0 || cy.Changes[0].Op != "update" {
				t.Errorf("cycle %d: %+v, want an update on every pass", cy.N, cy.Changes)
			}
		}
	})
	t.Run("render error", func(t *testing.T) {
		code, out, _ := runOrk(t, "simulate", "-f", "../simulate/testdata/broken/katalog.yaml", "-o", "plan")
		var plan simulate.Plan
		if err := json.Unmarshal([]byte(out), &plan); err != nil || code != ExitFailed {
			t.Fatalf("exit %d, stdout no plan: %v\n%s", code, err, out)
		}
		var failed []string
		for _, c := range plan.CRDs {
			for _, cr := range c.CRs {
				if cr.Error != "" {
					failed = append(failed, cr.Ref)
					if cr.Steady {
						t.Errorf("%s failed and is steady", cr.Ref)
					}
				}
			}
		}
		if plan.Steady || len(failed) == 0 {
			t.Errorf("plan steady %v with failed CRs %v; want not steady with a failed CR", plan.Steady, failed)
		}
	})
	t.Run("remote skipped", func(t *testing.T) {
		code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/remote/katalog.yaml", "-o", "plan")
		var plan simulate.Plan
		if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 {
			t.Fatalf("exit %d, stdout no plan: %v\n%s", code, err, out)
		}
		want := simulate.Plan{Steady: true, CRDs: []simulate.PlanCRD{{Name: "webapp", Skipped: simulate.SkipRemote, CRs: []simulate.PlanCR{}}}}
		if d := cmp.Diff(want, plan); d != "" {
			t.Errorf("plan (-want +got):\n%s", d)
		}
		if errOut != "webapp:\n"+remoteNote+"\n"+remoteNext+nothingSimulated {
			t.Errorf("stderr %q, want the note", errOut)
		}
	})
}

// On a remote-only Katalog, -o yaml prints the seed's note as a YAML comment on stdout (an
// empty output says why) as well as on stderr.
func TestSimulateYAMLRemoteNoteIsAComment(t *testing.T) {
	code, out, errOut := runOrk(t, "simulate", "-f", "../../examples/remote/katalog.yaml", "-o", "yaml")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if want := "# webapp:\n# " + remoteNote + "\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if want := "webapp:\n" + remoteNote + "\n" + remoteNext + nothingSimulated; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}
