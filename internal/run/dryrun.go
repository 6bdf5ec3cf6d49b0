package run

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/dryplan"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/runplan"
)

// reasonNotCalled is the plan's reason for a custom resource being deleted that a dry run
// does not call the reconciler for.
const reasonNotCalled = "BeingDeleted"

// newDryRunner is ork run --dry-run's plan (run/dryplan); nil without --dry-run.
func newDryRunner(opts Options, crds int) *dryplan.Collector {
	if !opts.DryRun {
		return nil
	}
	return dryplan.New(dryplan.Options{Watch: opts.Watch, IncludeDeletes: opts.IncludeDeletes, OnPlan: opts.OnPlan, CRDs: crds})
}

// note records a change the pass over the CR of key would make.
func (c *controller) note(cr metav1.Object, ch runplan.Change) {
	r := c.e.dry
	if r == nil {
		return
	}
	r.Note(c.cfg.crd.Name, kobj.KeyOf(cr), ch)
}

// emitPlan hands the pass's plan to OnPlan.
func (c *controller) emitPlan(in input, d decision) {
	r := c.e.dry
	if r == nil {
		return
	}
	r.Emit(c.cfg.crd.Name, in.key, runplan.CR{CRD: c.cfg.crd.Name, Namespace: in.cr.GetNamespace(), Name: in.cr.GetName(), Trigger: string(in.trigger),
		Deleting: in.deleting, Suspended: d.reason == ReasonSuspended, Called: d.reason != reasonNotCalled && !d.quiet && c.cfg.crd.IsRemote(), Result: d.result,
		Success: d.success, Reason: d.reason, Message: d.message})
}

// skipDelete is the decision of a dry-run pass over a custom resource being deleted: shown,
// not called, unless IncludeDeletes. ok is false when the pass runs as usual.
func (c *controller) skipDelete(in input) (decision, bool) {
	if c.e.dry == nil || !in.deleting || c.e.dry.IncludeDeletes() {
		return decision{}, false
	}
	return decision{success: true, action: actionDone, reason: reasonNotCalled,
		message: "being deleted: not called (--include-deletes calls the reconciler)"}, true
}

// statusFields names the fields a status patch would write, for the plan.
func statusFields(patch map[string]any) []string {
	st, _ := patch["status"].(map[string]any)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(st)) {
		out = append(out, fmt.Sprintf("status.%s", childwrite.PathKey(k)))
	}
	return out
}
