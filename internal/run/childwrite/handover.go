package childwrite

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"

	"github.com/orkspace/ork/internal/naming"
)

// handOver prepares the first apply onto a child ork created. The create's fields belong to
// an Update entry of field manager orkestra, and an apply under the same name is another
// entry (Apply): left as they are, every field would be owned twice, a field the reconciler
// drops would never be removed (the Update entry still holds it), and an adoption would
// keep the old controller reference next to the new one. So before that apply the Update
// entry's fields move into the Apply entry: a patch of managedFields alone, conditional on
// the version decided on. It returns the object to apply onto: live itself when there is
// nothing to hand over. Once per child, on its first apply after the create; the write is
// recorded as ork's own, so its event costs no call.
func (w *Writer) handOver(ctx context.Context, cr metav1.Object, p planned, live metav1.Object) (metav1.Object, error) {
	if !createdByOrk(live.GetManagedFields()) {
		return live, nil
	}
	full := live
	if summarised(live.GetManagedFields()) {
		// The cache keeps a summary of managedFields only: read them whole.
		read, err := w.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed)
		if err != nil {
			return nil, err
		}
		if read == nil || read.GetUID() != live.GetUID() {
			// Gone or replaced since the decision: a conflict, which has it read and decided anew.
			return nil, apierrors.NewConflict(p.gvr.GroupResource(), p.obj.GetName(), errors.New("deleted or replaced meanwhile"))
		}
		full = read
	}
	patch, err := handOverPatch(full)
	if err != nil || patch == nil {
		return full, err
	}
	moved, err := w.Meta.Resource(p.gvr).Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: naming.FieldManager})
	w.countApply(p, err == nil)
	if err != nil {
		return nil, err
	}
	w.Book.Wrote(p.ref, [32]byte{}, cr.GetUID(), full, moved) // no digest: not an apply of p
	return moved, nil
}

// handOverPatch is the JSON patch that hands the fields of ork's create entry of obj over to
// its apply entry; nil when there is nothing to hand over. obj may be the cache's own
// object: the upgrade writes into the entries it is given (their FieldsV1), so it gets a
// copy.
func handOverPatch(obj metav1.Object) ([]byte, error) {
	entries := make([]metav1.ManagedFieldsEntry, 0, len(obj.GetManagedFields()))
	for _, e := range obj.GetManagedFields() {
		entries = append(entries, *e.DeepCopy())
	}
	return csaupgrade.UpgradeManagedFieldsPatch(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		ManagedFields: entries, ResourceVersion: obj.GetResourceVersion()}},
		sets.New(naming.FieldManager), naming.FieldManager)
}

// createdByOrk reports whether entries hold an Update entry of ork's field manager (status
// subresource entries aside): what ork's create left, not yet handed over to its applies.
func createdByOrk(entries []metav1.ManagedFieldsEntry) bool {
	for _, m := range entries {
		if m.Manager == naming.FieldManager && m.Subresource == "" && m.Operation == metav1.ManagedFieldsOperationUpdate {
			return true
		}
	}
	return false
}

// summarised reports whether entries are the child cache's summary (SummariseWriters) with
// something dropped: its marker is the one entry without fields, which the apiserver never
// writes. A summary that dropped nothing is the whole list.
func summarised(entries []metav1.ManagedFieldsEntry) bool {
	for _, m := range entries {
		if m.FieldsV1 == nil {
			return true
		}
	}
	return false
}
