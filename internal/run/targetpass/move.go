package targetpass

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/target"
)

// A CR whose target changes (docs/multicluster.md) leaves nothing behind: its children on the
// cluster it left are deleted once its answer on the new target is applied whole (written,
// nothing pending), never while an operation there goes on. Which targets may hold a CR's
// children is kept in its status (crstatus.TargetsField), written before the first child
// goes to a target, so that a restart, or another replica taking the CR's bucket, knows them
// too; the hub needs no record, its child caches know its children. The target-cleanup
// finalizer stays while any target may hold a child.

// EventLeftCleanupPending is the Warning Event of a pass that could not delete a CR's
// children on a cluster it left (docs/multicluster.md): the CR stays Ready, its children
// being where it wants them, and the finalizer stays.
const EventLeftCleanupPending = "LeftTargetCleanupPending"

// recorded are the targets base's status names as holding its children. An entry ork cannot
// read (edited by hand) is logged and left out.
func (t *Targets) recorded(base *unstructured.Unstructured) []target.Ref {
	raw, _, _ := unstructured.NestedSlice(base.Object, "status", crstatus.TargetsField)
	var out []target.Ref
	for _, v := range raw {
		s, _ := v.(string)
		ref, err := target.ParseRef(s)
		if err != nil {
			t.log().Warn("status."+crstatus.TargetsField+": an entry that names no target is ignored", "key", kobj.KeyOf(base), "err", err)
			continue
		}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// record writes refs as the targets that may hold cr's children, unless base says so
// already, Deps.Records says no record is written, or base is nil.
func (t *Targets) record(ctx context.Context, cr CR, base *unstructured.Unstructured, refs []target.Ref) error {
	if !t.d.Records() || base == nil {
		return nil
	}
	names := make([]any, 0, len(refs))
	for _, ref := range refs {
		names = append(names, ref.String())
	}
	if cur, _, _ := unstructured.NestedSlice(base.Object, "status", crstatus.TargetsField); len(cur) == 0 && len(names) == 0 || kobj.EqualJSON(cur, names) {
		return nil // unchanged: nothing is written for the many CRs that never had a target
	}
	uid := cr.Object().GetUID()
	if err := t.d.Writer.MayWrite(cr.Key(), uid); err != nil {
		return err
	}
	var v any = names
	if len(names) == 0 {
		v = nil // a merge patch's null removes the key
	}
	return cr.WriteStatus(ctx, map[string]any{"metadata": map[string]any{"uid": string(uid)}, "status": map[string]any{crstatus.TargetsField: v}})
}

// recordTarget adds ref to the targets that may hold cr's children before any child is
// written there.
func (t *Targets) recordTarget(ctx context.Context, cr CR, ref target.Ref) error {
	base, err := cr.RecordBase(ctx)
	if err != nil || base == nil {
		return err
	}
	refs := t.recorded(base)
	if slices.Contains(refs, ref) {
		return nil
	}
	return t.record(ctx, cr, base, append(refs, ref))
}

// Leave deletes cr's children from every cluster other than p's: the hub's children of a
// pass that went there, and those of each target the status records. It runs once the
// pass's answer is applied whole on p. A target that does not answer keeps its record (and
// the finalizer), and after says when to try again (0: nothing left). When the CR is back on
// the hub with no target left, the target-cleanup finalizer goes.
func (t *Targets) Leave(ctx context.Context, cr CR, p Pass) (after time.Duration, err error) {
	if t.off() {
		return 0, nil
	}
	if !p.Ref.Local() && t.hubHolds(cr.Object()) {
		// Written on the hub by an earlier pass: owned there, so prune finds them as any
		// other child (and honours its opt-out).
		if err := t.d.Hub.Prune(ctx, cr.Object(), &childwrite.Report{}); err != nil {
			return 0, err
		}
	}
	base, err := cr.RecordBase(ctx)
	if err != nil || base == nil {
		return 0, err
	}
	recorded := t.recorded(base)
	var keep []target.Ref
	if !p.Ref.Local() {
		keep = append(keep, p.Ref)
	}
	var held map[types.UID]bool // the new target's children: another Secret may reach its cluster
	for _, old := range recorded {
		if old == p.Ref {
			continue
		}
		if held == nil && p.Spoke != nil {
			if held, err = p.Spoke.Held(ctx, cr.Object(), t.d.Selector); err != nil {
				return 0, err
			}
		}
		left, down, err := t.sweep(ctx, cr.Object(), old, held)
		if err != nil {
			return 0, err
		}
		switch {
		case down != "":
			t.log().Info("a target the custom resource left does not answer: its children there are deleted later",
				"key", cr.Key(), "target", old.String(), "err", down)
			t.d.Event(cr.Object(), corev1.EventTypeWarning, EventLeftCleanupPending, fmt.Sprintf(
				"target %s, which the custom resource left, does not answer: its children there are deleted once it does (%s). "+
					"If that cluster is gone for good, remove its entry from status.%s (kubectl edit --subresource=status)",
				old, down, crstatus.TargetsField))
			keep = append(keep, old)
			after = minPositive(after, t.unreachable(old, down).After)
		case left > 0:
			keep = append(keep, old)
			after = minPositive(after, cleanupPoll)
		}
	}
	if err := t.record(ctx, cr, base, keep); err != nil {
		return 0, err
	}
	if len(keep) == 0 && slices.Contains(cr.Object().GetFinalizers(), naming.TargetCleanupFinalizer) {
		if stop, err := cr.SetFinalizer(ctx, false); err != nil || stop {
			return 0, err
		}
	}
	return after, nil
}

// LeftBehind names why cr may still have children on a cluster it left ("" when not): a
// target its status records other than at, its own, or the hub's caches holding children
// of a CR whose children go elsewhere. Only a pass cleans those up (Leave).
func (t *Targets) LeftBehind(cr *unstructured.Unstructured, at target.Ref) string {
	if t == nil {
		return "" // a controller built without its target pass (a test's)
	}
	for _, ref := range t.recorded(cr) {
		if ref != at {
			return "children may be left on " + ref.String()
		}
	}
	if !at.Local() && t.hubHolds(cr) {
		return "children may be left on this cluster"
	}
	return ""
}

// sweep deletes cr's children on ref and says how many are left; down says why ref does not
// answer (its breaker says when to try again). An error is a write's that is not the
// target's silence (a refused delete, a lost fence).
func (t *Targets) sweep(ctx context.Context, cr *unstructured.Unstructured, ref target.Ref, keep map[types.UID]bool) (left int, down string, err error) {
	if ok, why := t.d.Pool.Reachable(ref); !ok {
		return 0, why, nil
	}
	w, oneOff, err := t.sweeper(ctx, ref)
	if oneOff {
		// A client built for this sweep alone, whatever its outcome: the pool would keep it
		// (and probe the target) for ever, after the record's entry is removed by hand or
		// the CR is gone. No spoke uses it unless a controller holds the target.
		defer func() {
			key, uid := kobj.KeyOf(cr), cr.GetUID()
			switch {
			case t.d.Uses.Holds(ref):
				t.oneOffs.done(key, uid, ref)
			case err == nil && down == "" && left == 0:
				t.oneOffs.done(key, uid, ref)
				t.d.Pool.Forget(ref) // done with: its breaker too
			case err == nil && down == "":
				// Children still going (terminating): the next sweep comes within
				// cleanupPoll and uses the same client, not a new one and its handshake;
				// unless the CR is forgotten before it (Forget).
				t.oneOffs.keep(key, uid, ref)
			default:
				t.oneOffs.done(key, uid, ref)
				t.d.Pool.DropClient(ref) // its breaker says when to try again
			}
		}()
	}
	if err == nil {
		left, err = w.Sweep(ctx, cr, t.d.Selector, keep)
	}
	if err != nil && target.Unreachable(err) {
		t.d.Pool.Failed(ref, err)
		return 0, err.Error(), nil
	}
	if err != nil {
		return 0, "", err
	}
	t.d.Pool.Succeeded(ref)
	return left, "", nil
}

// sweeper is the writer that deletes children on ref: the controller's spoke of ref when one
// runs (its write book then knows the deletes for its own), else one over the target's
// client alone (oneOff), which lists live and needs no caches.
func (t *Targets) sweeper(ctx context.Context, ref target.Ref) (w *childwrite.Writer, oneOff bool, err error) {
	if sp, ok := t.d.Set.Running(ref); ok {
		return sp.Writer, false, nil
	}
	cl, err := t.d.Pool.Get(ctx, ref)
	if err != nil {
		return nil, true, err
	}
	caches := make([]childwrite.Cache, 0, len(t.d.Kinds))
	for _, ch := range t.d.Kinds {
		caches = append(caches, childwrite.Cache{GVR: ch.GVR})
	}
	wd := t.d.Writer
	return childwrite.New(childwrite.Deps{
		Meta: cl.Meta, Book: childwrite.NewBook(), MayWrite: wd.MayWrite, NotLeader: wd.NotLeader,
		Children: caches, CRD: wd.CRD, Operator: wd.Operator, DryRun: wd.DryRun, Note: wd.Note,
		Log: wd.Log.With("target", ref.String()), Remote: true,
	}), true, nil
}

// held are the targets that may hold a deleting CR's children: those its status records and
// the one it resolves to now (a record older than its first write there).
func (t *Targets) held(ctx context.Context, cr CR, now target.Ref) ([]target.Ref, error) {
	var refs []target.Ref
	if !now.Local() {
		refs = append(refs, now)
	}
	base, err := cr.RecordBase(ctx)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = cr.Object()
	}
	for _, ref := range t.recorded(base) {
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// minPositive is the smaller of a and b, ignoring zeros.
func minPositive(a, b time.Duration) time.Duration {
	if a == 0 {
		return b
	}
	return min(a, b)
}
