package decision

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/orkspace/ork/internal/naming"
)

// ChildState is what the drift test without a call compares of one child
// (docs/remote-reconciler.md#failover-without-re-asking): its identity, the digest of ork's
// intent it carries (naming.AppliedAnnotation) and the fields ork's field manager holds. An
// apply gives ork exactly the fields it sent, and whatever another writer does to one of them
// takes it away, so an unchanged Owned says nothing ork wrote has changed.
type ChildState struct {
	Group, Resource, Namespace, Name string
	// Applied is the child's naming.AppliedAnnotation.
	Applied string
	// Owned is OwnedFieldsDigest of the child's managedFields; StateOf leaves it to
	// ChildrenDigest, which computes it from mine only when asked (ChildrenMatch may not).
	Owned string
	// AsRead is ownedAsRead of the child's managedFields: equal bytes hold equal fields,
	// which ChildrenMatch tells without decoding them.
	AsRead string
	// mine are ork's entries of the child, for Owned.
	mine []metav1.ManagedFieldsEntry
	// Deleting: the child has a deletionTimestamp.
	Deleting bool
	// ResourceVersion is kept only when the reconciler reads the children
	// (payload.children.enabled): any change of a child, its status included, is then an input.
	ResourceVersion string
}

// StateOf is the ChildState of a child of group and resource; withVersion keeps its
// resourceVersion (payload.children.enabled).
func StateOf(group, resource string, obj metav1.Object, withVersion bool) ChildState {
	s := ChildState{Group: group, Resource: resource, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Applied: obj.GetAnnotations()[naming.AppliedAnnotation], Deleting: obj.GetDeletionTimestamp() != nil}
	for _, e := range obj.GetManagedFields() {
		if mine(e) {
			s.mine = append(s.mine, e)
		}
	}
	if _, decoded := obj.(*unstructured.Unstructured); decoded {
		// Its managedFields were decoded into maps and encoded again, their keys sorted:
		// only the canonical form says what the server holds.
		s.Owned = OwnedFieldsDigest(s.mine)
		s.AsRead = s.Owned
	} else {
		s.AsRead = ownedAsRead(s.mine)
	}
	if withVersion {
		s.ResourceVersion = obj.GetResourceVersion()
	}
	return s
}

// mine reports whether e is an entry of ork's field manager of the object itself.
func mine(e metav1.ManagedFieldsEntry) bool {
	return e.Manager == naming.FieldManager && e.Subresource == "" && e.FieldsV1 != nil
}

// OwnedFieldsDigest is the hex SHA-256 of ork's field manager's entries of the object itself
// (no subresource): each entry's operation, API version and fields, the fields in the
// apiserver's canonical form (a field set decoded and encoded again, so that a list read
// through another client, whose keys come back in another order, digests alike). Times are
// left out: a removal or a scale write leaves them as they were, and an apply that changes
// nothing moves none. "" when ork holds no entry.
func OwnedFieldsDigest(entries []metav1.ManagedFieldsEntry) string {
	type own struct{ op, apiVersion, fields string }
	var owns []own
	for _, e := range entries {
		if !mine(e) {
			continue
		}
		owns = append(owns, own{string(e.Operation), e.APIVersion, canonicalFields(e.FieldsV1.GetRawReader())})
	}
	if len(owns) == 0 {
		return ""
	}
	slices.SortFunc(owns, func(a, b own) int {
		return cmp.Or(cmp.Compare(a.op, b.op), cmp.Compare(a.apiVersion, b.apiVersion), cmp.Compare(a.fields, b.fields))
	})
	h := sha256.New()
	for _, m := range owns {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", m.op, m.apiVersion, m.fields)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalFields is a FieldsV1 document in the field set's own encoding; the raw bytes when
// they do not decode (still a digest of what the server holds).
func canonicalFields(raw io.Reader) string {
	b, err := io.ReadAll(raw)
	if err != nil {
		return ""
	}
	var set fieldpath.Set
	if err := set.FromJSON(bytes.NewReader(b)); err != nil {
		return string(b)
	}
	out, err := set.ToJSON()
	if err != nil {
		return string(b)
	}
	return string(out)
}

// ChildrenDigest is the record of a custom resource's children (LastDecision.Children):
// "sha256:" and the hex SHA-256 of config and the states, sorted by group, resource,
// namespace and name, with each child's fields in canonical form (Owned); then a space and
// the same digest with each child's fields as read (AsRead), which a later check of the same
// children read the same way matches without decoding any field set (ChildrenMatch). It is
// the exact set of a custom resource's children and what ork holds of each: a child missing,
// extra, replaced under its annotation or with a field taken from ork changes it. config is
// the digest of the CRD's reconcile configuration (ConfigDigest): a changed Katalog (another
// endpoint, other excludes or types) is not a question answered before.
func ChildrenDigest(config string, states []ChildState) string {
	return childrenDigest(config, states, owned) + " " + childrenDigest(config, states, func(s ChildState) string { return s.AsRead })
}

// ChildrenMatch reports whether states, with config, are the children recorded (a
// ChildrenDigest): by the digest of their fields as read when the record holds one and it
// matches, else by the canonical one. Equal bytes are equal fields, so the first never
// matches where the second would not.
func ChildrenMatch(config string, states []ChildState, recorded string) bool {
	canonical, asRead, _ := strings.Cut(recorded, " ")
	if asRead != "" && childrenDigest(config, states, func(s ChildState) string { return s.AsRead }) == asRead {
		return true
	}
	return childrenDigest(config, states, owned) == canonical
}

// canonicalOf is the canonical digest of a record of children (ChildrenDigest), which is
// what says whether the children changed: the one as read may differ for the same fields.
func canonicalOf(children string) string {
	canonical, _, _ := strings.Cut(children, " ")
	return canonical
}

// owned is s.Owned, computed from its entries when StateOf left it.
func owned(s ChildState) string {
	if s.Owned == "" && len(s.mine) > 0 {
		return OwnedFieldsDigest(s.mine)
	}
	return s.Owned
}

func childrenDigest(config string, states []ChildState, fields func(ChildState) string) string {
	states = slices.Clone(states)
	slices.SortFunc(states, func(a, b ChildState) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", config)
	for _, s := range states {
		// NUL separates the fields: none of them can hold one.
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%t\x00%s\n",
			s.Group, s.Resource, s.Namespace, s.Name, s.Applied, fields(s), s.Deleting, s.ResourceVersion)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// ConfigDigest is the hex SHA-256 of v's JSON (a CRD's reconcile configuration); "" when it
// does not encode.
func ConfigDigest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Why a first pass calls although skipUnchanged is on: the verdicts of Unchanged.
const (
	NotRecorded    = "no decision recorded with its children"
	InputsChanged  = "inputs changed"
	DecisionTooOld = "decision older than maxAge"
	// DecisionAhead: the record's time is ahead of this replica's clock by more than
	// clockSkew; trusting it would keep it young for as long.
	DecisionAhead   = "decision dated ahead of this clock"
	ChildrenChanged = "children changed"
)

// clockSkew is how far ahead of this replica's clock a record written by another replica may
// be dated and still be trusted.
const clockSkew = time.Minute

// Unchanged reports whether a pass whose inputs digest is inputs may skip its call on the
// strength of d, the custom resource's last decision, at now: d recorded its children, and
// inputs, children (same: whether the live children are d's record of them, ChildrenMatch)
// and a time less than maxAge ago all hold. When they do not, why names the first that
// failed. same is a func: the children are looked at only when everything else holds.
func (d LastDecision) Unchanged(inputs string, same func(recorded string) bool, now time.Time, maxAge time.Duration) (ok bool, why string) {
	switch {
	case d.Children == "" || d.Inputs == "":
		return false, NotRecorded
	case d.Inputs != inputs:
		return false, InputsChanged
	case maxAge <= 0 || now.Sub(d.Time) >= maxAge:
		return false, DecisionTooOld
	case d.Time.Sub(now) > clockSkew:
		return false, DecisionAhead
	case !same(d.Children):
		return false, ChildrenChanged
	}
	return true, ""
}

// Stale reports whether d, the record on the custom resource, must give way to next, the
// record of a pass that may write nothing else: next records no children (its answer was not
// applied whole) while d would let a call be skipped; or next does, and d holds other
// inputs or children, or is more than half of maxAge old (refreshed so that a converged
// custom resource stays skippable), or asks a shorter requeue delay. A longer delay alone
// does not count (the children digest holds whether there is one): a reconciler whose
// delay varies would make every pass write, and a skip that requeues a little early costs
// one call. skipUnchanged writes such a record even alone.
func (d LastDecision) Stale(next LastDecision, now time.Time, maxAge time.Duration) bool {
	if next.Children == "" {
		return d.Children != ""
	}
	// The canonical digests only: the same children read once from an answer and once from
	// the cache may differ as read, and a record written for that alone would cost a write.
	return d.Inputs != next.Inputs || canonicalOf(d.Children) != canonicalOf(next.Children) || shorter(next.RequeueAfter, d.RequeueAfter) ||
		now.Sub(d.Time) >= maxAge/2
}

// shorter reports whether requeue delay a is shorter than b: a skip schedules the recorded
// delay, so a record holding a longer one would put the requeue off.
func shorter(a, b string) bool {
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da < db
}
