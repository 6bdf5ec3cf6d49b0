package run

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/apiwarnings"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/run/targetpass"
	"github.com/orkspace/ork/internal/target"
)

// Targets: the children of a CR whose CRD names a target (docs/multicluster.md) go to the
// cluster its kubeconfig Secret reaches; run/targetpass decides where, and cleans up the
// clusters a CR left. Here are its dependencies and the decisions it ends a pass with.
const (
	// reasonTargetInvalid: the CR's target does not render (a field it lacks).
	reasonTargetInvalid = "TargetInvalid"
	// EventLeftTargetCleanupPending is the Warning Event of a pass that could not delete a
	// CR's children on a cluster it left (docs/multicluster.md): the CR stays Ready, its
	// children being where it wants them, and the finalizer stays.
	EventLeftTargetCleanupPending = targetpass.EventLeftCleanupPending
)

// newTargets is c's target pass over set, built once its child caches and writer exist;
// set is nil when the CRD names no target, and the pass then sends every child to the hub.
func (c *controller) newTargets(set *spokes.Set) *targetpass.Targets {
	kinds := make([]targetpass.ChildType, 0, len(c.children)+len(c.cfg.targetTypes))
	for _, ch := range c.children {
		kinds = append(kinds, targetpass.ChildType{GVR: ch.gvr, TypeKey: ch.typeKey, Hub: ch.informer.GetIndexer()})
	}
	for _, ch := range c.cfg.targetTypes {
		kinds = append(kinds, targetpass.ChildType{GVR: ch.gvr, TypeKey: ch.typeKey})
	}
	return targetpass.New(targetpass.Deps{
		Set: set, Pool: c.e.targets, Uses: &c.e.spokeUse, Kinds: kinds, Selector: childSelector(c.e.opts.Name),
		DiscoveryResetInterval: c.e.opts.DiscoveryResetInterval, Writer: c.childWriteDeps(), Hub: c.writes,
		Cached: c.cached, ChildChanged: c.childChanged, Event: c.event, MinAfter: minRequeueAfter,
		Requeue: func(key string) { c.add(key, addOpts{trigger: TriggerRequeue}) },
		Records: func() bool { return c.cfg.hasStatus && c.crw.records() && !c.pruned.Has(crstatus.TargetsField) },
	})
}

// targetPass is where one pass writes the CR's children: the hub, or a target.
type targetPass struct {
	targetpass.Pass
	writes childWrites
}

// passTarget resolves in's target (targetpass.Targets.Resolve) and names it in in.target. A
// failure the pass reports is a decision; an error is a failed finalizer write or a lost
// fence.
func (c *controller) passTarget(ctx context.Context, in *input) (targetPass, *decision, error) {
	cr := &targetCR{c: c, in: in}
	p, v, err := c.targets.Resolve(ctx, cr, in.deleting, in.gone)
	in.target = p.Target
	tp := targetPass{Pass: p, writes: c.writes}
	if p.Spoke != nil {
		tp.writes = p.Spoke
	}
	return tp, decisionOf(v, cr.stop), err
}

// targetWritten makes d TargetUnreachable when the writes to tp's target met a failure that
// says it cannot be reached; what the pass read and the operation it holds stay.
func (c *controller) targetWritten(tp targetPass, err error, d *decision, wrote bool) {
	if v := c.targets.Written(tp.Pass, err, wrote); v != nil {
		f := *decisionOf(v, nil)
		f.related, f.relatedRead, f.relatedCut, f.op, f.progress = d.related, d.relatedRead, d.relatedCut, d.op, d.progress
		*d = f
	}
}

// cleanupTarget deletes a deleting CR's children from its targets (targetpass.Targets.Cleanup);
// a decision asks to look again while children remain.
func (c *controller) cleanupTarget(ctx context.Context, in *input, tp targetPass) (*decision, error) {
	cr := &targetCR{c: c, in: in}
	v, err := c.targets.Cleanup(ctx, cr, tp.Pass)
	return decisionOf(v, cr.stop), err
}

// decisionOf is the decision of the target pass's verdict v, or stop when it gave none: the
// decision of a finalizer write that ended the pass.
func decisionOf(v *targetpass.Verdict, stop *decision) *decision {
	if v == nil {
		return stop
	}
	d := decision{action: actionRetryAfter, after: v.After, reason: target.ReasonTargetUnreachable, message: v.Message}
	switch v.Outcome {
	case targetpass.Invalid:
		d = failure(reasonTargetInvalid, "%s", v.Message)
	case targetpass.Waiting:
		d = decision{success: true, action: actionRequeueAfter, after: v.After, reason: ReasonSucceeded, message: v.Message}
	}
	return &d
}

// targetCR lends in to the target pass (targetpass.CR): its writes are the controller's, and
// stop keeps the decision of a finalizer write that ended the pass.
type targetCR struct {
	c    *controller
	in   *input
	stop *decision
}

func (t *targetCR) Key() string                        { return t.in.key }
func (t *targetCR) Object() *unstructured.Unstructured { return t.in.cr }

func (t *targetCR) SetFinalizer(ctx context.Context, present bool) (bool, error) {
	d, err := t.c.setFinalizerNamed(ctx, t.in, naming.TargetCleanupFinalizer, present)
	t.stop = d
	return d != nil, err
}

// RecordBase is as statusBase gives it.
func (t *targetCR) RecordBase(ctx context.Context) (*unstructured.Unstructured, error) {
	return t.c.statusBase(ctx, *t.in)
}

// WriteStatus patches the status record as a status write: its pruned keys noted, the write
// remembered (or, dry, noted for the plan); in.cr becomes the written object.
func (t *targetCR) WriteStatus(ctx context.Context, patch map[string]any) error {
	c, in := t.c, t.in
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode status.%s: %w", crstatus.TargetsField, err)
	}
	wctx, warned := apiwarnings.Collect(ctx)
	out, err := c.e.dyn.Resource(c.cfg.gvr).Namespace(in.cr.GetNamespace()).Patch(wctx, in.cr.GetName(),
		types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if err != nil {
		return failed(reasonStatusWriteFailed, "write status.%s: %v", crstatus.TargetsField, err)
	}
	c.notePruned(*in, statusResult{}, warned.UnknownFields("status"))
	c.crw.wroteStatus(*in, patch, out)
	_, _ = kobj.StripManagedFields(out)
	in.cr, in.written = out, true
	return nil
}
