package childwrite

import (
	"context"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
)

// SummariseWriters is the child informers' transform: it keeps of an object's managedFields
// (large, and mostly unread) ork's own entries of the object whole, the fields ork owns
// (appliedUnchanged, handOver), and drops every other entry, leaving in their place one
// entry without fields, which marks the list as a summary (summarised).
func SummariseWriters(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(writers(m.GetManagedFields()))
	}
	return obj, nil
}

// writers summarises entries (see SummariseWriters): ork's field manager's entries of the
// object itself (its Apply, and the Update a create leaves until the first apply takes it
// over: handOver) as they are, and, if any other entry was dropped, the latest of them
// without its fields (an entry without a time counts as the latest). It is idempotent.
func writers(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	var dropped *metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Manager == naming.FieldManager && e.Subresource == "" && e.FieldsV1 != nil {
			out = append(out, e)
			continue
		}
		if dropped == nil || later(e.Time, dropped.Time) {
			dropped = &metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, Subresource: e.Subresource, Time: e.Time}
		}
	}
	if dropped != nil {
		out = append(out, *dropped)
	}
	return out
}

// later reports whether a is after b (a nil time is now).
func later(a, b *metav1.Time) bool {
	switch {
	case a == nil:
		return b != nil
	case b == nil:
		return false
	}
	return a.After(b.Time)
}

// appliedUnchanged reports whether live, a child cr controls, is what ork would write now:
// it carries the digest of p (ork wrote exactly p last), and ork's field manager still owns
// every field of p (nobody removed, changed or took over any of them since: see
// ownedfields). It needs no apply, even when ork's write book does not know it (after a
// restart, on a new leader). When ownership cannot be told, it answers false: one apply.
func (w *Writer) appliedUnchanged(ctx context.Context, p planned, live metav1.Object) bool {
	if p.digest == [32]byte{} || live.GetAnnotations()[naming.AppliedAnnotation] != hex.EncodeToString(p.digest[:]) {
		return false
	}
	owned, err := w.Owned.Owns(ctx, p.obj, live.GetManagedFields())
	if err != nil {
		w.Log.Debug("field ownership unknown: applying", "resource", p.gvr.Resource, "name", p.obj.GetName(), "err", err)
	}
	return owned
}
