package run

import (
	"bytes"
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// handOver finishes the first apply onto a child ork created. The create's fields belong to
// an Update entry of field manager orkestra, and an apply under the same name is another
// entry (Apply): left alone, every field would be owned twice and a field the reconciler
// drops would never be removed, since the Update entry still holds it. The apply's answer
// (out) shows that entry; its fields move into the Apply entry (a patch of managedFields,
// conditional on out's resourceVersion), and when it held a field this apply left out, the
// apply is sent again, which now removes that field. Once per child, on its first change.
func (c *controller) handOver(ctx context.Context, p planned, out metav1.Object) (metav1.Object, error) {
	leftOver, found, err := createdOnly(out.GetManagedFields())
	if err != nil || !found {
		return out, err
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		ManagedFields: out.GetManagedFields(), ResourceVersion: out.GetResourceVersion()}},
		sets.New(FieldManager), FieldManager)
	if err != nil || patch == nil {
		return out, err
	}
	moved, err := c.e.meta.Resource(p.gvr).Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	c.countApply(p, err == nil)
	if err != nil {
		return nil, fmt.Errorf("hand the fields of %s/%s over from its create to its apply: %w", p.gvr.Resource, p.obj.GetName(), err)
	}
	if !leftOver {
		return moved, nil
	}
	return c.apply(ctx, p, moved, true)
}

// createdOnly reports whether managedFields hold an Update entry of ork's field manager
// (found; status subresource entries aside), and whether it owns a field ork's Apply entry
// does not (leftOver): a field the last apply dropped.
func createdOnly(entries []metav1.ManagedFieldsEntry) (leftOver, found bool, err error) {
	var update, apply *metav1.ManagedFieldsEntry
	for i, m := range entries {
		if m.Manager != FieldManager || m.Subresource != "" {
			continue
		}
		switch m.Operation {
		case metav1.ManagedFieldsOperationUpdate:
			update = &entries[i]
		case metav1.ManagedFieldsOperationApply:
			apply = &entries[i]
		}
	}
	if update == nil {
		return false, false, nil
	}
	if apply == nil || update.FieldsV1 == nil {
		return true, true, nil
	}
	var u, a fieldpath.Set
	if err := u.FromJSON(bytes.NewReader(update.FieldsV1.Raw)); err != nil {
		return false, true, fmt.Errorf("decode managedFields of %s: %w", FieldManager, err)
	}
	if apply.FieldsV1 != nil {
		if err := a.FromJSON(bytes.NewReader(apply.FieldsV1.Raw)); err != nil {
			return false, true, fmt.Errorf("decode managedFields of %s: %w", FieldManager, err)
		}
	}
	return !u.Difference(&a).Empty(), true, nil
}
