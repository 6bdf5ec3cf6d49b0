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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Owned is OwnedFieldsDigest of the child's managedFields.
	Owned string
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
		Applied: obj.GetAnnotations()[naming.AppliedAnnotation], Owned: OwnedFieldsDigest(obj.GetManagedFields()),
		Deleting: obj.GetDeletionTimestamp() != nil}
	if withVersion {
		s.ResourceVersion = obj.GetResourceVersion()
	}
	return s
}

// OwnedFieldsDigest is the hex SHA-256 of ork's field manager's entries of the object itself
// (no subresource): each entry's operation, API version and fields, the fields in the
// apiserver's canonical form (a field set decoded and encoded again, so that a list read
// through another client, whose keys come back in another order, digests alike). Times are
// left out: a removal or a scale write leaves them as they were, and an apply that changes
// nothing moves none. "" when ork holds no entry.
func OwnedFieldsDigest(entries []metav1.ManagedFieldsEntry) string {
	type own struct{ op, apiVersion, fields string }
	var mine []own
	for _, e := range entries {
		if e.Manager != naming.FieldManager || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		mine = append(mine, own{string(e.Operation), e.APIVersion, canonicalFields(e.FieldsV1.GetRawReader())})
	}
	if len(mine) == 0 {
		return ""
	}
	slices.SortFunc(mine, func(a, b own) int {
		return cmp.Or(cmp.Compare(a.op, b.op), cmp.Compare(a.apiVersion, b.apiVersion), cmp.Compare(a.fields, b.fields))
	})
	h := sha256.New()
	for _, m := range mine {
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

// ChildrenDigest is "sha256:" and the hex SHA-256 of config and the states, sorted by group,
// resource, namespace and name: the exact set of a custom resource's children and what ork
// holds of each. A child missing, extra, replaced under its annotation or with a field taken
// from ork changes it. config is the digest of the CRD's reconcile configuration
// (ConfigDigest): a changed Katalog (another endpoint, other excludes or types) is not a
// question answered before.
func ChildrenDigest(config string, states []ChildState) string {
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
			s.Group, s.Resource, s.Namespace, s.Name, s.Applied, s.Owned, s.Deleting, s.ResourceVersion)
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

// Unchanged reports whether a pass whose inputs digest is inputs and whose children digest
// is children may skip its call on the strength of d, the custom resource's last decision, at
// now: d recorded its children, and inputs, children and a time less than maxAge ago all
// hold. When they do not, why names the first that failed. children is a func: the children
// are looked at only when everything else holds.
func (d LastDecision) Unchanged(inputs string, children func() string, now time.Time, maxAge time.Duration) (ok bool, why string) {
	switch {
	case d.Children == "" || d.Inputs == "":
		return false, NotRecorded
	case d.Inputs != inputs:
		return false, InputsChanged
	case maxAge <= 0 || now.Sub(d.Time) >= maxAge:
		return false, DecisionTooOld
	case d.Time.Sub(now) > clockSkew:
		return false, DecisionAhead
	case children() != d.Children:
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
	return d.Inputs != next.Inputs || d.Children != next.Children || shorter(next.RequeueAfter, d.RequeueAfter) ||
		now.Sub(d.Time) >= maxAge/2
}

// shorter reports whether requeue delay a is shorter than b: a skip schedules the recorded
// delay, so a record holding a longer one would put the requeue off.
func shorter(a, b string) bool {
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da < db
}
