package output

import (
	"bytes"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/runplan"
)

func TestRunPlanText(t *testing.T) {
	crs := []runplan.CR{
		{CRD: "webapp", Namespace: "default", Name: "fresh", Trigger: "create", Called: true, Result: "ok", Success: true,
			Reason: "ReconcileSucceeded", Changes: []runplan.Change{
				{Action: runplan.AddFinalizer, Ref: "orkestra.orkspace.io/remote"},
				{Action: runplan.Create, Ref: "deployments/fresh", Namespace: "default"},
				{Action: runplan.Create, Ref: "configmaps/shared", Namespace: "other"},
				{Action: runplan.Status, Ref: "status", Fields: []string{"status.conditions", "status.phase"}},
			}},
		{CRD: "webapp", Namespace: "default", Name: "idle", Trigger: "create", Called: true, Result: "ok", Success: true, Reason: "ReconcileSucceeded",
			Changes: []runplan.Change{}},
		{CRD: "webapp", Namespace: "default", Name: "leaving", Trigger: "create", Deleting: true, Success: true, Reason: "BeingDeleted",
			Message: "being deleted: not called (--include-deletes calls the reconciler)", Changes: []runplan.Change{}},
		{CRD: "webapp", Namespace: "default", Name: "paused", Trigger: "create", Suspended: true, Success: true, Reason: "Suspended",
			Message: "reconciling is suspended by the annotation orkestra.orkspace.io/reconcile: suspended; remove it to resume", Changes: []runplan.Change{}},
		{CRD: "webapp", Namespace: "default", Name: "web", Trigger: "create", Called: true, Result: "ok", Success: true,
			Reason: "ReconcileSucceeded", Changes: []runplan.Change{
				{Action: runplan.Update, Ref: "deployments/web", Namespace: "default", Fields: []string{"spec.template.spec.containers[0].image"}},
				{Action: runplan.Prune, Ref: "services/web-svc", Namespace: "default"},
			}},
		{CRD: "webapp", Namespace: "default", Name: "broken", Trigger: "create", Called: true, Result: "error", Reason: "ReconcileError",
			Message: "reconciler returned error: backend down", Changes: []runplan.Change{
				{Action: runplan.Status, Ref: "status", Fields: []string{"status.conditions"}},
			}},
	}
	var b bytes.Buffer
	if err := RunPlan(&b, NewStyle(&b, false), crs); err != nil {
		t.Fatal(err)
	}
	goldenfile.Assert(t, "testdata/runplan.golden", b.Bytes())
}
