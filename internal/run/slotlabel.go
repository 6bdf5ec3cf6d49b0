package run

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/shard"
)

// The engine's side of a take's labelling (shardring.Members.SlotChildren): which children
// are this Katalog's and its operator's to label, found through the controllers; the ring
// writes each label as a pass of the owner's bucket (shardring.Ring.LabelSlot).

// unslottedChildren selects the children ork wrote without the slot label.
const unslottedChildren = ManagedByLabel + "=" + ManagedByValue + ",!" + naming.SlotLabel

// labelUnslotted gives naming.SlotLabel (and OperatorLabel, which an older ork did not
// write) to the children without it whose controller is a CR of the Katalog in one of
// buckets. Each write carries the child's uid and resourceVersion as preconditions (a
// child changed meanwhile is left to its owner's apply) and goes as a pass of its owner's
// bucket: a hand-back waits for it, a loss cancels it, and the transport checks the bucket
// at the send. A failure is logged, not fatal: the owners' applies label the rest.
func (e *Engine) labelUnslotted(ctx context.Context, controllers []*controller, buckets []int) map[string]string {
	owners := map[schema.GroupKind]bool{}
	for _, c := range controllers {
		owners[c.cfg.gvk.GroupKind()] = true
	}
	want := map[int]bool{}
	for _, b := range buckets {
		want[b] = true
	}
	labelled := 0
	written := map[string]string{}
	for _, col := range childCollections(controllers) {
		n, rv, err := e.labelUnslottedOf(ctx, col.gvr, col.ns, owners, want)
		labelled += n
		if rv != "" {
			written[shardring.CollectionKey(col.gvr, col.ns)] = rv
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("labelling children written before sharding: their owners' applies will label the rest",
				"resource", col.gvr.GroupResource().String(), "buckets", buckets, "error", err.Error())
		}
	}
	if labelled > 0 {
		e.log.Info("gave the slot label to the children written before sharding", "label", naming.SlotLabel,
			"buckets", buckets, "children", labelled)
	}
	return written
}

// labelUnslottedOf labels the collection's unslotted children of the buckets want, and
// returns how many, and the highest resourceVersion its writes answered ("" for none).
func (e *Engine) labelUnslottedOf(ctx context.Context, gvr schema.GroupVersionResource, ns string,
	owners map[schema.GroupKind]bool, want map[int]bool) (int, string, error) {
	list, err := e.meta.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: unslottedChildren})
	if err != nil {
		return 0, "", fmt.Errorf("list: %w", err)
	}
	n, highest := 0, ""
	for i := range list.Items {
		obj := &list.Items[i]
		ref := metav1.GetControllerOf(obj)
		if ref == nil || !want[shard.BucketOf(ref.UID, e.ring.Buckets())] {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || !owners[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}] {
			continue // another controller's object that carries ork's managed-by label
		}
		if op, ok := obj.GetLabels()[OperatorLabel]; ok && op != e.opts.Name {
			continue // another operator's
		}
		rv, err := e.ring.LabelSlot(ctx, e.meta.Resource(gvr).Namespace(obj.GetNamespace()), obj, ref.UID, e.opts.Name, unslotted)
		if err != nil {
			return n, highest, err
		}
		if rv != "" {
			n++
			if shardring.RVAfter(rv, highest) {
				highest = rv
			}
		}
	}
	return n, highest, nil
}

// unslotted is labelUnslotted's test of a re-read child: no slot label yet.
func unslotted(cur metav1.Object) bool { return cur.GetLabels()[naming.SlotLabel] == "" }
