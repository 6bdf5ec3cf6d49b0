package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/shard"
)

// Children written before sharding was turned on (by a single leader) carry no slot label,
// and a sharded replica's child caches select on it: such a child would be invisible (not
// pruned when its owner's reconciler drops it, an onCreate child's changes unheard) until
// its owner's next apply wrote it. So each take labels them: the replica that took a bucket
// gives the slot label to the unslotted children of that bucket's CRs, and once its child
// cache shows one, queues its owner again (the owner's take pass may have run without it).

// unslottedChildren selects the children ork wrote without the slot label.
const unslottedChildren = ManagedByLabel + "=" + ManagedByValue + ",!" + shard.SlotLabel

// labelUnslotted gives shard.SlotLabel (and OperatorLabel, which an older ork did not
// write) to the children without it whose controller is a CR of the Katalog in one of
// buckets. Each write carries the child's uid and resourceVersion as preconditions (a
// child changed meanwhile is left to its owner's apply) and goes as a pass of its owner's
// bucket: a hand-back waits for it, a loss cancels it, and the transport checks the bucket
// at the send. A failure is logged, not fatal: the owners' applies label the rest.
func (e *Engine) labelUnslotted(ctx context.Context, controllers []*controller, buckets []int) {
	owners := map[schema.GroupKind]bool{}
	for _, c := range controllers {
		owners[c.gvk.GroupKind()] = true
	}
	want := map[int]bool{}
	for _, b := range buckets {
		want[b] = true
	}
	labelled := 0
	for _, col := range childCollections(controllers) {
		n, err := e.labelUnslottedOf(ctx, col.gvr, col.ns, owners, want)
		labelled += n
		if err != nil && ctx.Err() == nil {
			e.log.Warn("labelling children written before sharding: their owners' applies will label the rest",
				"resource", col.gvr.GroupResource().String(), "buckets", buckets, "error", err.Error())
		}
	}
	if labelled > 0 {
		e.log.Info("gave the slot label to the children written before sharding", "label", shard.SlotLabel,
			"buckets", buckets, "children", labelled)
	}
}

func (e *Engine) labelUnslottedOf(ctx context.Context, gvr schema.GroupVersionResource, ns string,
	owners map[schema.GroupKind]bool, want map[int]bool) (int, error) {
	list, err := e.meta.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: unslottedChildren})
	if err != nil {
		return 0, fmt.Errorf("list: %w", err)
	}
	n := 0
	for i := range list.Items {
		obj := &list.Items[i]
		ref := metav1.GetControllerOf(obj)
		if ref == nil || !want[shard.BucketOf(ref.UID, e.shards.buckets)] {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || !owners[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}] {
			continue // another controller's object that carries ork's managed-by label
		}
		if op, ok := obj.GetLabels()[OperatorLabel]; ok && op != e.opts.Name {
			continue // another operator's
		}
		ok, err := e.labelSlot(ctx, gvr, obj, ref.UID)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// labelSlot writes the slot label on one child, as a pass of its owner's bucket. ok is
// false when the bucket is no longer this replica's (its next holder labels the child) or
// the child changed or went meanwhile.
func (e *Engine) labelSlot(ctx context.Context, gvr schema.GroupVersionResource, obj *metav1.PartialObjectMetadata, owner types.UID) (bool, error) {
	bucketCtx, done, ok := e.shards.beginLabel(owner)
	if !ok {
		return false, nil
	}
	defer done()
	wctx, cancel := context.WithCancel(withCRUID(ctx, owner))
	defer cancel()
	defer context.AfterFunc(bucketCtx, cancel)()
	patch, err := labelPatch(obj.GetUID(), obj.GetResourceVersion(),
		map[string]string{OperatorLabel: e.opts.Name, shard.SlotLabel: shard.SlotOf(owner)})
	if err != nil {
		return false, err
	}
	// Before the write: the child cache may show the child before the answer comes.
	e.shards.slotted.Store(obj.GetUID(), shard.BucketOf(owner, e.shards.buckets))
	_, err = e.meta.Resource(gvr).Namespace(obj.GetNamespace()).Patch(wctx, obj.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		e.shards.slotted.Delete(obj.GetUID())
	}
	switch {
	case err == nil:
		return true, nil
	case precondition.Failed(err), apierrors.IsNotFound(err), errors.Is(err, errNotLeader), bucketCtx.Err() != nil:
		// Changed or gone meanwhile (the apply decides), or the bucket went: not this
		// replica's to label any more.
		return false, nil
	default:
		return false, fmt.Errorf("label %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
}

// labeller labels the unslotted children of the buckets taken (labelUnslotted), one run at
// a time, and marks each bucket labelled after (shardready.go): the takes that arrive during
// a run go together into the next, so that a ring moving many buckets lists each child type
// once per run, not once per change of the held buckets, and no run outlives the process.
func (s *shards) labeller(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.labelKick:
		}
		s.mu.Lock()
		bs := slices.Sorted(maps.Keys(s.toLabel))
		takes := make([]uint64, len(bs))
		for i, b := range bs {
			takes[i] = s.toLabel[b]
		}
		clear(s.toLabel)
		slot := s.slotChildren
		s.mu.Unlock()
		if len(bs) == 0 {
			continue
		}
		if slot != nil {
			slot(bs)
		}
		s.labelled(bs, takes)
	}
}

// revealed queues the owner of a child labelSlot just labelled, now that the child cache
// shows it, and reports whether it did: the owner's take pass may have run before, without
// the child. The slow lane (the take's backlog), no sooner than ChildMinInterval after the
// owner's last pass, as for a child's change.
func (c *controller) revealed(obj any) bool {
	if c.e.shards == nil {
		return false
	}
	u, ok := deletedMeta(obj)
	if !ok {
		return false
	}
	key, ok := c.ownerKey(u)
	if !ok {
		return false
	}
	if _, ok := c.e.shards.slotted.LoadAndDelete(u.GetUID()); !ok {
		return false
	}
	last := c.ledger.note(key, TriggerChild)
	c.countTrigger(TriggerChild)
	if wait := c.e.opts.ChildMinInterval - time.Since(last); wait > 0 {
		c.queue.AddAfter(key, wait)
		return true
	}
	c.queue.Add(key)
	return true
}
