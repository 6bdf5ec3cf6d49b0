package shardring

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

	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/shard"
)

// Children written before sharding was turned on (by a single leader) carry no slot label,
// and a sharded replica's child caches select on it: such a child would be invisible (not
// pruned when its owner's reconciler drops it, an onCreate child's changes unheard) until
// its owner's next apply wrote it. So each take labels them: the replica that took a bucket
// gives the slot label to the unslotted children of that bucket's CRs, and once its child
// cache shows one, queues its owner again (the owner's take pass may have run without it).

// CollectionKey names a child collection (resource, namespace) as the end of the
// ChildListKey of each informer that caches it.
func CollectionKey(gvr schema.GroupVersionResource, ns string) string {
	return "/" + gvr.String() + "/" + ns
}

// RVAfter reports whether resourceVersion a is after b ("" is before any); a version that
// is not a number counts as after, so that it is waited for.
func RVAfter(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return b == "" || err1 != nil || err2 != nil || x > y
}

// LabelTries bounds the writes of one child's label: a child whose resourceVersion
// moved meanwhile (its status written) is read again and tried again, as long as it is
// still unslotted and its owner's.
const LabelTries = 3

// LabelSlot writes the slot label on one child, as a pass of its owner's bucket, and
// returns the resourceVersion of the write ("" when none was made: the bucket is no longer
// this replica's, and its next holder labels the child; or the child went, was labelled
// meanwhile, or changed past LabelTries reads). res is the child's collection; operator is
// the operator label written with the slot (an older ork did not write it); still tells,
// on a re-read after a conflict, whether the child still needs this write.
func (s *Ring) LabelSlot(ctx context.Context, res metadata.ResourceInterface, obj *metav1.PartialObjectMetadata, owner types.UID,
	operator string, still func(metav1.Object) bool) (string, error) {
	bucketCtx, done, ok := s.beginLabel(owner)
	if !ok {
		return "", nil
	}
	defer done()
	wctx, cancel := context.WithCancel(withCRUID(ctx, owner))
	defer cancel()
	defer context.AfterFunc(bucketCtx, cancel)()
	// Before the write: the child cache may show the child before the answer comes.
	s.slotted.Store(obj.GetUID(), shard.BucketOf(owner, s.buckets))
	rv, err := patchSlotLabel(wctx, res, obj, owner,
		map[string]string{naming.OperatorLabel: operator, naming.SlotLabel: naming.SlotOf(owner)}, still)
	if rv == "" {
		s.slotted.Delete(obj.GetUID())
	}
	switch {
	case err == nil:
		return rv, nil
	case precondition.Failed(err), apierrors.IsNotFound(err), errors.Is(err, leadership.ErrNotLeader), bucketCtx.Err() != nil:
		// Gone, changed past the tries (its owner's apply labels it), or the bucket went:
		// not this replica's to label any more.
		return "", nil
	default:
		return "", fmt.Errorf("label %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
}

// Revealed reports whether the child of uid was one labelSlot labelled and is now shown
// by its child cache, and forgets it: its owner is then queued again.
func (s *Ring) Revealed(uid types.UID) bool {
	_, ok := s.slotted.LoadAndDelete(uid)
	return ok
}

// patchSlotLabel writes labels on the unslotted child obj of owner, with its uid and
// resourceVersion as preconditions, and returns the write's resourceVersion. A child
// whose resourceVersion moved meanwhile (its status written) is read again and tried
// again, up to LabelTries writes, while it is still unslotted and owner's; "" and no
// error when it went, was labelled meanwhile or changed owner.
func patchSlotLabel(ctx context.Context, res metadata.ResourceInterface, obj *metav1.PartialObjectMetadata, owner types.UID,
	labels map[string]string, still func(metav1.Object) bool) (string, error) {
	for try := 1; ; try++ {
		patch, err := kobj.LabelPatch(obj.GetUID(), obj.GetResourceVersion(), labels)
		if err != nil {
			return "", err
		}
		got, err := res.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: naming.FieldManager})
		if err == nil {
			return got.GetResourceVersion(), nil
		}
		if !precondition.Failed(err) || try == LabelTries {
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

// labeller labels the unslotted children of the buckets taken (Members.SlotChildren), one run at
// a time, and marks each bucket labelled after (ready.go): the takes that arrive during
// a run go together into the next, so that a ring moving many buckets lists each child type
// once per run, not once per change of the held buckets, and no run outlives the process.
func (s *Ring) labeller(ctx context.Context) {
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
// CollectionKey) has taken in the resourceVersion written there, or ctx ends.
func (s *Ring) waitStoresReach(ctx context.Context, written map[string]string) {
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
