package childwrite

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/decision"
)

// ChildStates are the states of cr's children for the drift test without a call
// (decision.ChildState; docs/remote-reconciler.md#failover-without-re-asking): every child
// the caches show cr controlling, with its resourceVersion when withVersion. With rep, a
// pass's report, they are as the pass left them: a child it created or applied as its write
// answered (the cache may not have caught up), one it pruned gone, the others as cached; ok
// is then false when a child the answer lists is in neither (the cache lags, or it is a child
// no owner index shows, as one in another namespace is): such a record would be no proof.
// The child caches keep ork's own managedFields entries whole (SummariseWriters), so this
// reads nothing from the apiserver.
func (w *Writer) ChildStates(cr *unstructured.Unstructured, rep *Report, withVersion bool) (states []decision.ChildState, ok bool) {
	seen := map[Ref]bool{}
	add := func(ref Ref, obj metav1.Object) {
		seen[ref] = true
		states = append(states, decision.StateOf(ref.gr.Group, ref.gr.Resource, obj, withVersion))
	}
	for _, ch := range w.Children {
		objs, err := ch.Store.ByIndex(OwnerIndex, string(cr.GetUID()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			m, err := meta.Accessor(o)
			if err != nil || !w.controls(cr, m) {
				continue
			}
			ref := RefOf(ch.GVR.GroupResource(), m)
			if rep != nil && rep.pruned[ref] {
				continue
			}
			if rep != nil && rep.written[ref] != nil {
				m = rep.written[ref]
			}
			add(ref, m)
		}
	}
	if rep == nil {
		return states, true
	}
	for ref, out := range rep.written {
		if !seen[ref] {
			add(ref, out) // created by this pass: not cached yet
		}
	}
	for ref := range rep.kept {
		if !seen[ref] {
			return states, false
		}
	}
	return states, true
}
