package run

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/run/childwrite"
)

// labelOlderChildren gives OperatorLabel to the children an older ork wrote for this
// Katalog's custom resources, before the child caches start. Without it the caches, which
// select on the label, would miss them: the first passes would send an incomplete
// prepared.children (a reconciler that re-creates what it does not see could overwrite a
// Secret's data), and a change to them would go unheard until an apply labelled them. A
// child is this operator's when its controller is a custom resource of one of the Katalog's
// CRDs; a child without a controller (outside its owner's namespace) is left to the apply,
// which reads it live. Each write carries the child's uid and resourceVersion: a child
// changed meanwhile is left to the apply too. A failure is logged, not fatal: the apply path
// labels the rest.
func (e *Engine) labelOlderChildren(ctx context.Context, controllers []*controller) {
	if e.dry != nil || e.ring != nil {
		// A sharded replica holds no bucket yet, so may write for no CR: each take labels
		// its bucket's children (Engine.labelTaken, rename.go).
		return
	}
	// owners are the Katalog's kinds, and whether each is namespaced (its key's form).
	owners := map[schema.GroupKind]bool{}
	for _, c := range controllers {
		owners[c.cfg.gvk.GroupKind()] = c.cfg.crd.IsNamespaced()
	}
	labelled := 0
	for _, col := range childCollections(controllers) {
		n, err := childwrite.LabelOlder(ctx, e.meta.Resource(col.gvr), col.ns, e.fence.mayWrite, e.opts.Name, owners)
		labelled += n
		if err != nil {
			e.log.Warn("labelling children of an older ork: the applies will label the rest",
				"resource", col.gvr.GroupResource().String(), "error", err.Error())
		}
	}
	if labelled > 0 {
		e.log.Info("labelled the children an older ork wrote", "label", OperatorLabel+"="+e.opts.Name, "children", labelled)
	}
}

// childCollection is one child type in one watched namespace (all: NamespaceAll).
type childCollection struct {
	gvr schema.GroupVersionResource
	ns  string
}

// childCollections are the child types of every controller in each namespace their
// informers watch, each once: what the start-up and take-time labelling list.
func childCollections(controllers []*controller) []childCollection {
	seen := map[childCollection]bool{}
	var out []childCollection
	for _, c := range controllers {
		for _, ch := range c.children {
			namespaces := ch.informer.Namespaces()
			if len(namespaces) == 0 {
				namespaces = []string{metav1.NamespaceAll}
			}
			for _, ns := range namespaces {
				if col := (childCollection{ch.gvr, ns}); !seen[col] {
					seen[col] = true
					out = append(out, col)
				}
			}
		}
	}
	return out
}
