package run

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/apiwarnings"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/target"
)

// A CR whose target changes (docs/multicluster.md) leaves nothing behind: its children on the
// cluster it left are deleted once its answer on the new target is applied whole (written,
// nothing pending: appliedWhole), never while an operation there goes on. Which targets may
// hold a CR's children is kept in its status (crstatus.TargetsField), written before the
// first child goes to a target, so that a restart, or another replica taking the CR's
// bucket, knows them too; the hub needs no record, its child caches know its children. The
// target-cleanup finalizer stays while any target may hold a child.

// EventLeftTargetCleanupPending is the Warning Event of a pass that could not delete a CR's
// children on a cluster it left (docs/multicluster.md): the CR stays Ready, its children
// being where it wants them, and the finalizer stays.
const EventLeftTargetCleanupPending = "LeftTargetCleanupPending"

// recordedTargets are the targets base's status names as holding its children. An entry
// ork cannot read (edited by hand) is logged and left out.
func (c *controller) recordedTargets(base *unstructured.Unstructured) []target.Ref {
	raw, _, _ := unstructured.NestedSlice(base.Object, "status", crstatus.TargetsField)
	var out []target.Ref
	for _, v := range raw {
		s, _ := v.(string)
		ref, err := target.ParseRef(s)
		if err != nil {
			c.cfg.log.Warn("status."+crstatus.TargetsField+": an entry that names no target is ignored", "key", kobj.KeyOf(base), "err", err)
			continue
		}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// recordBase is the CR whose status the record is read from: as statusBase gives it (a
// fresh read when the cache is behind ork's own last status write, whose record it may
// lack); nil when it is gone or replaced.
func (c *controller) recordBase(ctx context.Context, in *input) (*unstructured.Unstructured, error) {
	return c.statusBase(ctx, *in)
}

// recordTargets writes refs as the targets that may hold in's children, unless base says so
// already, the CRD keeps no status (or its schema prunes the key: then ork knows them only
// until it stops), or the run is dry. in.cr becomes the written object.
func (c *controller) recordTargets(ctx context.Context, in *input, base *unstructured.Unstructured, refs []target.Ref) error {
	if !c.cfg.hasStatus || !c.crw.records() || c.pruned.Has(crstatus.TargetsField) || base == nil {
		return nil
	}
	names := make([]any, 0, len(refs))
	for _, ref := range refs {
		names = append(names, ref.String())
	}
	if cur, _, _ := unstructured.NestedSlice(base.Object, "status", crstatus.TargetsField); len(cur) == 0 && len(names) == 0 || kobj.EqualJSON(cur, names) {
		return nil // unchanged: nothing is written for the many CRs that never had a target
	}
	if err := c.e.fence.mayWrite(in.key, in.cr.GetUID()); err != nil {
		return err
	}
	var v any = names
	if len(names) == 0 {
		v = nil // a merge patch's null removes the key
	}
	patch := map[string]any{"metadata": map[string]any{"uid": string(in.cr.GetUID())}, "status": map[string]any{crstatus.TargetsField: v}}
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

// recordTarget adds ref to the targets that may hold in's children before any child is
// written there.
func (c *controller) recordTarget(ctx context.Context, in *input, ref target.Ref) error {
	base, err := c.recordBase(ctx, in)
	if err != nil || base == nil {
		return err
	}
	refs := c.recordedTargets(base)
	if slices.Contains(refs, ref) {
		return nil
	}
	return c.recordTargets(ctx, in, base, append(refs, ref))
}

// leaveOldTargets deletes in's children from every cluster other than tp's: the hub's
// children of a pass that went there, and those of each target the status records. It runs
// once the pass's answer is applied whole on tp (appliedWhole). A target that does not answer keeps its record (and the
// finalizer), and after says when to try again (0: nothing left). When the CR is back on the
// hub with no target left, the target-cleanup finalizer goes.
func (c *controller) leaveOldTargets(ctx context.Context, in *input, tp targetPass) (after time.Duration, err error) {
	if c.spokes == nil {
		return 0, nil
	}
	if !tp.ref.Local() && c.hubHolds(in.cr) {
		// Written on the hub by an earlier pass: owned there, so prune finds them as any
		// other child (and honours its opt-out).
		if err := c.writes.Prune(ctx, in.cr, &childwrite.Report{}); err != nil {
			return 0, err
		}
	}
	base, err := c.recordBase(ctx, in)
	if err != nil || base == nil {
		return 0, err
	}
	recorded := c.recordedTargets(base)
	var keep []target.Ref
	if !tp.ref.Local() {
		keep = append(keep, tp.ref)
	}
	var held map[types.UID]bool // the new target's children: another Secret may reach its cluster
	for _, old := range recorded {
		if old == tp.ref {
			continue
		}
		if held == nil && tp.spoke != nil {
			if held, err = tp.spoke.Held(ctx, in.cr, childSelector(c.e.opts.Name)); err != nil {
				return 0, err
			}
		}
		left, down, err := c.sweepTarget(ctx, in, old, held)
		if err != nil {
			return 0, err
		}
		switch {
		case down != "":
			c.cfg.log.Info("a target the custom resource left does not answer: its children there are deleted later",
				"key", in.key, "target", old.String(), "err", down)
			c.event(in.cr, corev1.EventTypeWarning, EventLeftTargetCleanupPending, fmt.Sprintf(
				"target %s, which the custom resource left, does not answer: its children there are deleted once it does (%s). "+
					"If that cluster is gone for good, remove its entry from status.%s (kubectl edit --subresource=status)",
				old, down, crstatus.TargetsField))
			keep = append(keep, old)
			after = minPositive(after, c.unreachable(old, down).after)
		case left > 0:
			keep = append(keep, old)
			after = minPositive(after, cleanupPoll)
		}
	}
	if err := c.recordTargets(ctx, in, base, keep); err != nil {
		return 0, err
	}
	if len(keep) == 0 && slices.Contains(in.cr.GetFinalizers(), naming.TargetCleanupFinalizer) {
		if d, err := c.setFinalizerNamed(ctx, in, naming.TargetCleanupFinalizer, false); err != nil || d != nil {
			return 0, err
		}
	}
	return after, nil
}

// sweepTarget deletes in's children on ref and says how many are left; down says why ref
// does not answer (its breaker says when to try again). An error is a write's that is not
// the target's silence (a refused delete, a lost fence).
func (c *controller) sweepTarget(ctx context.Context, in *input, ref target.Ref, keep map[types.UID]bool) (left int, down string, err error) {
	if ok, why := c.e.targets.Reachable(ref); !ok {
		return 0, why, nil
	}
	w, oneOff, err := c.sweeper(ctx, ref)
	if oneOff {
		// A client built for this sweep alone, whatever its outcome: the pool would keep it
		// (and probe the target) for ever, after the record's entry is removed by hand or
		// the CR is gone. No spoke uses it unless a controller holds the target.
		defer func() {
			switch {
			case c.e.spokeUse.Holds(ref):
			case err == nil && down == "" && left == 0:
				c.e.targets.Forget(ref) // done with: its breaker too
			case err == nil && down == "":
				// Children still going (terminating): the next sweep comes within
				// cleanupPoll and uses the same client, not a new one and its handshake.
			default:
				c.e.targets.DropClient(ref) // its breaker says when to try again
			}
		}()
	}
	if err == nil {
		left, err = w.Sweep(ctx, in.cr, childSelector(c.e.opts.Name), keep)
	}
	if err != nil && target.Unreachable(err) {
		c.e.targets.Failed(ref, err)
		return 0, err.Error(), nil
	}
	if err != nil {
		return 0, "", err
	}
	c.e.targets.Succeeded(ref)
	return left, "", nil
}

// sweeper is the writer that deletes children on ref: the controller's spoke of ref when one
// runs (its write book then knows the deletes for its own), else one over the target's
// client alone (oneOff), which lists live and needs no caches.
func (c *controller) sweeper(ctx context.Context, ref target.Ref) (w *childwrite.Writer, oneOff bool, err error) {
	if sp, ok := c.spokes.Running(ref); ok {
		return sp.Writer, false, nil
	}
	cl, err := c.e.targets.Get(ctx, ref)
	if err != nil {
		return nil, true, err
	}
	kinds := append(slices.Clone(c.children), c.cfg.targetTypes...)
	caches := make([]childwrite.Cache, 0, len(kinds))
	for _, ch := range kinds {
		caches = append(caches, childwrite.Cache{GVR: ch.gvr})
	}
	return childwrite.New(childwrite.Deps{
		Meta: cl.Meta, Book: childwrite.NewBook(), MayWrite: c.e.fence.mayWrite, NotLeader: errNotLeader,
		Children: caches, CRD: c.cfg.crd.Name, Operator: c.e.opts.Name, DryRun: c.e.dry != nil, Note: c.note,
		Log: c.cfg.log.With("target", ref.String()), Remote: true,
	}), true, nil
}

// heldTargets are the targets that may hold a deleting CR's children: those its status
// records and the one it resolves to now (a record older than its first write there).
func (c *controller) heldTargets(ctx context.Context, in *input, now target.Ref) ([]target.Ref, error) {
	var refs []target.Ref
	if !now.Local() {
		refs = append(refs, now)
	}
	base, err := c.recordBase(ctx, in)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = in.cr
	}
	for _, ref := range c.recordedTargets(base) {
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// hubHolds reports whether the hub's child caches hold a child of cr.
func (c *controller) hubHolds(cr *unstructured.Unstructured) bool {
	for _, ch := range c.children {
		if objs, err := ch.informer.GetIndexer().ByIndex(ownerIndex, string(cr.GetUID())); err == nil && len(objs) > 0 {
			return true
		}
	}
	return false
}

// minPositive is the smaller of a and b, ignoring zeros.
func minPositive(a, b time.Duration) time.Duration {
	if a == 0 {
		return b
	}
	return min(a, b)
}
