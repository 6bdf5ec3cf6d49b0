package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/shard"
)

// Children written before sharding was turned on (by a single leader) carry no slot label,
// and a sharded replica's child caches select on it: such a child would be invisible (not
// pruned when its owner's reconciler drops it, an onCreate child's changes unheard) until
// its owner's next apply wrote it. So each take labels them: the replica that took a bucket
// gives the slot label to the unslotted children of that bucket's CRs, and once its child
// cache shows one, queues its owner again (the owner's take pass may have run without it).

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
			written[collectionKey(col.gvr, col.ns)] = rv
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

// collectionKey names a child collection (resource, namespace) as the end of the
// childListKey of each informer that caches it.
func collectionKey(gvr schema.GroupVersionResource, ns string) string {
	return "/" + gvr.String() + "/" + ns
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
		rv, err := e.labelSlot(ctx, gvr, obj, ref.UID, unslotted)
		if err != nil {
			return n, highest, err
		}
		if rv != "" {
			n++
			if rvAfter(rv, highest) {
				highest = rv
			}
		}
	}
	return n, highest, nil
}

// rvAfter reports whether resourceVersion a is after b ("" is before any); a version that
// is not a number counts as after, so that it is waited for.
func rvAfter(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return b == "" || err1 != nil || err2 != nil || x > y
}

// labelSlotTries bounds the writes of one child's label: a child whose resourceVersion
// moved meanwhile (its status written) is read again and tried again, as long as it is
// still unslotted and its owner's.
const labelSlotTries = 3

// labelSlot writes the slot label on one child, as a pass of its owner's bucket, and
// returns the resourceVersion of the write ("" when none was made: the bucket is no longer
// this replica's, and its next holder labels the child; or the child went, was labelled
// meanwhile, or changed past labelSlotTries reads).
// still tells, on a re-read after a conflict, whether the child still needs this write.
func (e *Engine) labelSlot(ctx context.Context, gvr schema.GroupVersionResource, obj *metav1.PartialObjectMetadata, owner types.UID,
	still func(metav1.Object) bool) (string, error) {
	bucketCtx, done, ok := e.shards.beginLabel(owner)
	if !ok {
		return "", nil
	}
	defer done()
	wctx, cancel := context.WithCancel(withCRUID(ctx, owner))
	defer cancel()
	defer context.AfterFunc(bucketCtx, cancel)()
	// Before the write: the child cache may show the child before the answer comes.
	e.shards.slotted.Store(obj.GetUID(), shard.BucketOf(owner, e.shards.buckets))
	rv, err := patchSlotLabel(wctx, e.meta.Resource(gvr).Namespace(obj.GetNamespace()), obj, owner,
		map[string]string{OperatorLabel: e.opts.Name, naming.SlotLabel: naming.SlotOf(owner)}, still)
	if rv == "" {
		e.shards.slotted.Delete(obj.GetUID())
	}
	switch {
	case err == nil:
		return rv, nil
	case precondition.Failed(err), apierrors.IsNotFound(err), errors.Is(err, errNotLeader), bucketCtx.Err() != nil:
		// Gone, changed past the tries (its owner's apply labels it), or the bucket went:
		// not this replica's to label any more.
		return "", nil
	default:
		return "", fmt.Errorf("label %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
}

// unslotted is labelUnslotted's test of a re-read child: no slot label yet.
func unslotted(cur metav1.Object) bool { return cur.GetLabels()[naming.SlotLabel] == "" }

// patchSlotLabel writes labels on the unslotted child obj of owner, with its uid and
// resourceVersion as preconditions, and returns the write's resourceVersion. A child
// whose resourceVersion moved meanwhile (its status written) is read again and tried
// again, up to labelSlotTries writes, while it is still unslotted and owner's; "" and no
// error when it went, was labelled meanwhile or changed owner.
func patchSlotLabel(ctx context.Context, res metadata.ResourceInterface, obj *metav1.PartialObjectMetadata, owner types.UID,
	labels map[string]string, still func(metav1.Object) bool) (string, error) {
	for try := 1; ; try++ {
		patch, err := childwrite.LabelPatch(obj.GetUID(), obj.GetResourceVersion(), labels)
		if err != nil {
			return "", err
		}
		got, err := res.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if err == nil {
			return got.GetResourceVersion(), nil
		}
		if !precondition.Failed(err) || try == labelSlotTries {
			return "", err
		}
		cur, gerr := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if gerr != nil || cur.GetUID() != obj.GetUID() || !still(cur) {
			return "", nil
		}
		if ref := metav1.GetControllerOf(cur); ref == nil || ref.UID != owner {
			return "", nil
		}
		obj = cur
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
			// A run is bounded: one hung request would hold back every later take's
			// readiness. What it did not label, the owners' applies label.
			rctx, cancel := context.WithTimeout(ctx, labelRunTimeout)
			written := slot(rctx, bs)
			// The bucket is ready only once the child caches show what was labelled: a
			// take pass before would still miss those children.
			s.waitStoresReach(rctx, written)
			cancel()
		}
		s.labelled(bs, takes)
	}
}

// labelRunTimeout bounds one run of the labeller, its wait for the child caches included.
const labelRunTimeout = time.Minute

// waitStoresReach waits until each child store of the collections in written (by
// collectionKey) has taken in the resourceVersion written there, or ctx ends.
func (s *shards) waitStoresReach(ctx context.Context, written map[string]string) {
	if len(written) == 0 {
		return
	}
	s.mu.Lock()
	stores := maps.Clone(s.childStores)
	s.mu.Unlock()
	tick := time.NewTicker(storeCatchUpPoll)
	defer tick.Stop()
	for key, store := range stores {
		for col, rv := range written {
			if !strings.HasSuffix(key, col) {
				continue
			}
			for !storeReached(store, rv) {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}
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
	u, ok := kobj.DeletedMeta(obj)
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
	c.countTrigger(TriggerChild)
	c.add(key, addOpts{trigger: TriggerChild, minInterval: c.e.opts.ChildMinInterval})
	return true
}
