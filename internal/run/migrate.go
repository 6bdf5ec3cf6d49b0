package run

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/run/childlabel"
)

// labelAtStart labels, before the child caches start, the children an older ork wrote for
// this Katalog's custom resources: OperatorLabel on those written without it
// (childlabel.Labeller.Older), then OperatorLabel=Name on those labelled for the old default
// name (DefaultNamed). A sharded replica holds no bucket yet, so may write for no CR: each
// take labels its bucket's children (childlabel.Labeller.Taken, from the ring).
func (e *Engine) labelAtStart(ctx context.Context, controllers []*controller) {
	if e.dry != nil || e.ring != nil {
		return
	}
	l := e.childLabeller(controllers)
	l.Older(ctx)
	l.DefaultNamed(ctx, nil)
}

// childLabeller labels the children of controllers: a child is this operator's when its
// controller is a custom resource of one of their CRDs.
func (e *Engine) childLabeller(controllers []*controller) *childlabel.Labeller {
	d := childlabel.Deps{Meta: e.meta, Operator: e.opts.Name, MayWrite: e.fence.mayWrite,
		Owners: map[schema.GroupKind]bool{}, Collections: childCollections(controllers), Log: e.log}
	if e.ring != nil {
		d.Ring = e.ring
	}
	for _, c := range controllers {
		d.Owners[c.cfg.gvk.GroupKind()] = c.cfg.crd.IsNamespaced()
	}
	return childlabel.New(d)
}

// childCollections are the child types of every controller in each namespace their
// informers watch, each once: what the start-up and take-time labelling list.
func childCollections(controllers []*controller) []childlabel.Collection {
	seen := map[childlabel.Collection]bool{}
	var out []childlabel.Collection
	for _, c := range controllers {
		for _, ch := range c.children {
			namespaces := ch.informer.Namespaces()
			if len(namespaces) == 0 {
				namespaces = []string{metav1.NamespaceAll}
			}
			for _, ns := range namespaces {
				if col := (childlabel.Collection{GVR: ch.gvr, Namespace: ns}); !seen[col] {
					seen[col] = true
					out = append(out, col)
				}
			}
		}
	}
	return out
}
