package childwrite

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/runplan"
)

// effects are what a run's mode makes of the child writes, chosen once by New: the DryRun
// values every write is sent with, how a judged child is written, and what follows a write
// that succeeded. A real run remembers its writes (the write book, the ledger's onDelete
// memo) so that their events come back as echoes; a dry run changed nothing, so it remembers
// nothing and notes for the plan what would have changed. The write functions call this and
// never ask which mode they run in.
type effects interface {
	// options are the DryRun values of every write.
	options() []string
	// readsUnknown says whether checkOwner reads a child that neither the cache nor the write
	// book knows of. A real run takes it as absent: its conditional create finds out. A dry
	// run's apply creates nothing and fails on nothing, so only a read tells.
	readsUnknown() bool
	// writeChild writes p onto live (nil: absent), the object checkOwner decided on.
	writeChild(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (created, changed bool, err error)
	// relabels says whether the operator label an older ork left off an onCreate child is
	// written (labelOperator). A dry run sends nothing for it: the label changes nothing
	// the reconciler asked for, so the plan shows nothing either.
	relabels() bool
	// listed follows a pass listing ref: a prune of it noted earlier is withdrawn.
	listed(ref Ref)
	// created follows the create of an onCreate child, which answered out.
	created(cr *unstructured.Unstructured, p planned, out metav1.Object)
	// pruning precedes the delete of a child the answer no longer lists; pruned follows it,
	// notPruned follows its failure.
	pruning(ref Ref, uid types.UID)
	pruned(cr *unstructured.Unstructured, gvr schema.GroupVersionResource, ref Ref)
	notPruned(ref Ref, uid types.UID)
	// deleted follows the delete of one onDelete object; removed follows the whole block.
	deleted(cr *unstructured.Unstructured, gvr schema.GroupVersionResource, ref Ref)
	removed(key string, uid types.UID)
}

// newEffects is the real run's effects of w, or the dry run's when w.DryRun.
func newEffects(w *Writer) effects {
	if w.DryRun {
		return dryEffects{w: w}
	}
	return realEffects{w: w}
}

// realEffects write for real and record every write in the write book: its event is then
// known for ork's own.
type realEffects struct{ w *Writer }

func (realEffects) options() []string  { return nil }
func (realEffects) readsUnknown() bool { return false }
func (realEffects) relabels() bool     { return true }

func (r realEffects) writeChild(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (bool, bool, error) {
	return r.w.applyChild(ctx, cr, p, live)
}

func (r realEffects) listed(ref Ref) { r.w.Book.relisted(ref) }

func (r realEffects) created(cr *unstructured.Unstructured, p planned, out metav1.Object) {
	r.w.Book.Wrote(p.ref, p.digest, cr.GetUID(), nil, out)
}

// pruning is noted before the request, so that the delete's event is known for ork's own.
func (r realEffects) pruning(ref Ref, uid types.UID) { r.w.Book.Pruning(ref, uid) }

func (r realEffects) pruned(_ *unstructured.Unstructured, _ schema.GroupVersionResource, ref Ref) {
	r.w.Book.prunedDone(ref)
}

func (r realEffects) notPruned(ref Ref, uid types.UID) { r.w.Book.unprune(ref, uid) }

func (realEffects) deleted(*unstructured.Unstructured, schema.GroupVersionResource, Ref) {}

func (r realEffects) removed(key string, uid types.UID) { r.w.MarkRemoved(key, uid) }

// dryEffects send every write as a server-side dry run and note what it would change: the
// cluster did not change, so nothing ork remembers may say it did.
type dryEffects struct{ w *Writer }

func (dryEffects) options() []string  { return []string{metav1.DryRunAll} }
func (dryEffects) readsUnknown() bool { return true }
func (dryEffects) relabels() bool     { return false }

func (d dryEffects) writeChild(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (bool, bool, error) {
	if err := d.w.mayApply(cr, p, live); err != nil {
		return false, false, err
	}
	return d.w.dryApply(ctx, cr, p, live, live != nil && d.w.controls(cr, live))
}

func (dryEffects) listed(Ref) {}

func (d dryEffects) created(cr *unstructured.Unstructured, p planned, _ metav1.Object) {
	d.w.Note(cr, runplan.Change{Action: runplan.Create, Ref: p.gvr.Resource + "/" + p.obj.GetName(), Namespace: p.obj.GetNamespace()})
}

func (dryEffects) pruning(Ref, types.UID) {}

func (d dryEffects) pruned(cr *unstructured.Unstructured, gvr schema.GroupVersionResource, ref Ref) {
	d.w.Note(cr, runplan.Change{Action: runplan.Prune, Ref: gvr.Resource + "/" + ref.name, Namespace: ref.namespace})
}

func (dryEffects) notPruned(Ref, types.UID) {}

func (d dryEffects) deleted(cr *unstructured.Unstructured, gvr schema.GroupVersionResource, ref Ref) {
	d.w.Note(cr, runplan.Change{Action: runplan.Delete, Ref: gvr.Resource + "/" + ref.name, Namespace: ref.namespace})
}

func (dryEffects) removed(string, types.UID) {}
