package childwrite

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/decision"
)

// seen is what one child's write saw of it, for the decision log (Deps.Record): the whole
// object before the write and as the write answered, or only their resourceVersions when a
// whole object could not be had.
type seen struct {
	before, after     map[string]any
	rvBefore, rvAfter string
}

// readFull reads the whole child before a write, for the log's changed fields. A failed read
// costs the entry its fields, never the write: the log records, it does not decide.
func (w *Writer) readFull(ctx context.Context, p planned, live metav1.Object) {
	if p.seen == nil || live == nil {
		return
	}
	p.seen.rvBefore = live.GetResourceVersion()
	u, err := w.client(p).Get(ctx, p.obj.GetName(), metav1.GetOptions{})
	if err != nil {
		w.Log.Debug("decision log: the child before the write could not be read", "resource", p.gvr.Resource, "name", p.obj.GetName(), "err", err)
		return
	}
	p.seen.before, p.seen.rvBefore = u.Object, u.GetResourceVersion()
}

// wrote notes what a write answered.
func (p planned) wrote(out metav1.Object) {
	if p.after != nil && out != nil {
		*p.after = out
	}
	if p.seen == nil || out == nil {
		return
	}
	p.seen.rvAfter = out.GetResourceVersion()
	if u, ok := out.(*unstructured.Unstructured); ok {
		p.seen.after = u.Object
	}
}

// recorded is the decision log's account of one child's write: its outcome, its
// resourceVersions before and after, and the paths of the fields it changed (all of a
// created child's).
func (p planned) recorded(created, changed bool, live metav1.Object, err error) decision.Child {
	c := decision.Child{Ref: decision.Ref{APIVersion: p.obj.GetAPIVersion(), Kind: p.obj.GetKind(),
		Namespace: p.obj.GetNamespace(), Name: p.obj.GetName()}}
	s := p.seen
	if s == nil {
		s = &seen{}
	}
	switch {
	case err != nil:
		c.Outcome, c.Reason = decision.ChildFailed, reasonApplyFailed
		if we, ok := errors.AsType[*Error](err); ok {
			c.Reason = we.Reason
		}
		if live != nil {
			c.ResourceVersionBefore = live.GetResourceVersion()
		}
	case created:
		c.Outcome, c.ResourceVersionAfter = decision.ChildCreated, s.rvAfter
		if s.after != nil {
			c.Fields = decision.ChangedFields(nil, s.after)
		}
	case changed:
		c.Outcome, c.ResourceVersionBefore, c.ResourceVersionAfter = decision.ChildApplied, s.rvBefore, s.rvAfter
		if s.before != nil && s.after != nil {
			c.Fields = decision.ChangedFields(s.before, s.after)
		}
	default:
		c.Outcome = decision.ChildUnchanged
		if live != nil {
			c.ResourceVersionBefore, c.ResourceVersionAfter = live.GetResourceVersion(), live.GetResourceVersion()
		}
		if s.rvAfter != "" {
			c.ResourceVersionAfter = s.rvAfter
		}
	}
	return c
}

// prunedRecord is the decision log's account of a pruned child.
func (w *Writer) prunedRecord(cand pruneCandidate, rv string) decision.Child {
	gv := cand.gvr.GroupVersion()
	kind := cand.gvr.Resource
	if w.KindFor != nil {
		if gvk, err := w.KindFor(cand.gvr); err == nil {
			kind = gvk.Kind
		}
	}
	return decision.Child{Ref: decision.Ref{APIVersion: gv.String(), Kind: kind, Namespace: cand.ref.namespace, Name: cand.ref.name},
		ResourceVersionBefore: rv, Outcome: decision.ChildDeleted}
}
