package run

import (
	"bytes"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/orkspace/ork/internal/resources"
)

// summariseWriters is the child informers' transform: it replaces an object's managedFields
// (large, and otherwise unread) with what untouched needs: ork's latest write and the
// latest write of anyone else, their manager, operation and time only. Writes to the
// status subresource, and writes of only the annotations ork treats as the server's (the
// Deployment controller's revision), are not anyone else's writes of ork's object.
func summariseWriters(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(writers(m.GetManagedFields()))
	}
	return obj, nil
}

// writers summarises entries (see summariseWriters): the latest entry of anyone else, and
// ork's field manager's latest Apply and its Update (what a create leaves until the first
// apply takes it over: handOver). An entry without a time sorts last (as written now): a
// write whose time is unknown is taken as the newest. It is idempotent.
func writers(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var apply, update, other *metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Subresource != "" || (e.Manager != FieldManager && serverOnly(e)) {
			continue
		}
		kept := &metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, Time: e.Time}
		latest := &other
		switch {
		case e.Manager != FieldManager:
		case e.Operation == metav1.ManagedFieldsOperationApply:
			latest = &apply
		default:
			latest = &update
		}
		if *latest == nil || later(kept.Time, (*latest).Time) {
			*latest = kept
		}
	}
	var out []metav1.ManagedFieldsEntry
	for _, e := range []*metav1.ManagedFieldsEntry{apply, update, other} {
		if e != nil {
			out = append(out, *e)
		}
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

// serverOnly reports whether an entry owns nothing but annotations ork treats as the
// server's (resources.IsServerAnnotation).
func serverOnly(e metav1.ManagedFieldsEntry) bool {
	if e.FieldsV1 == nil {
		return false
	}
	var set fieldpath.Set
	if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return false
	}
	only := true
	set.Iterate(func(p fieldpath.Path) {
		if !only || len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "metadata" {
			only = false
			return
		}
		switch {
		case len(p) == 1:
		case p[1].FieldName == nil || *p[1].FieldName != "annotations":
			only = false
		case len(p) == 2:
		case len(p) > 3 || p[2].FieldName == nil || !resources.IsServerAnnotation(*p[2].FieldName):
			only = false
		}
	})
	return only
}

// untouched reports whether ork's last write is the object's latest: ork's field manager
// wrote it (an apply, or the create), and nobody else wrote it since, as far as seconds
// tell (managedFields times have a resolution of a second: a write in the same second as
// ork's counts as later, and costs one apply at most).
func untouched(entries []metav1.ManagedFieldsEntry) bool {
	var ork, other *metav1.Time
	for _, e := range writers(entries) {
		if e.Time == nil {
			return false // a write of unknown time: not known to be before ork's
		}
		switch {
		case e.Manager != FieldManager:
			other = e.Time
		case ork == nil || e.Time.After(ork.Time):
			ork = e.Time
		}
	}
	return ork != nil && (other == nil || other.Before(ork))
}

// appliedUnchanged reports whether live, a child cr controls, is what ork would write now:
// it carries the digest of p (ork wrote exactly p last), and nobody wrote it since. It
// needs no apply, even when ork's write book does not know it (after a restart, on a new
// leader).
func appliedUnchanged(p planned, live metav1.Object) bool {
	if p.digest == [32]byte{} || live.GetAnnotations()[resources.AppliedAnnotation] != hex.EncodeToString(p.digest[:]) {
		return false
	}
	return untouched(live.GetManagedFields())
}
