package shardring

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
)

// The child caches of a sharded replica select, beside the operator's labels, the slot
// label values of the held buckets (shard.SlotValues), so that each replica caches only its
// own CRs' children. Their informers come from the shared factories, so the selection is
// added one level down, in the clients the factories list and watch with: each list and
// watch carries the current holding's slots, and a change of holding ends the watch and
// the next one catches up with the new slots (as for the CR caches: catchup.go).

// childLister is the part of a dynamic or metadata resource client the informers use.
type childLister[L any] interface {
	List(ctx context.Context, o metav1.ListOptions) (L, error)
	Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
}

// slotSelected lists and watches through next with the held buckets' slots.
type slotSelected[L runtime.Object] struct {
	next childLister[L]
	s    *Ring
	// key names the informer's list and watch (client, resource, namespace): the informer
	// gets a new wrapper for each call, so the holding its last list used, and what the
	// informer was told, are kept in s.
	key string
	// blank is an empty object of the informer's type (a delete or bookmark to send).
	blank func() runtime.Object
}

func (c slotSelected[L]) List(ctx context.Context, o metav1.ListOptions) (L, error) {
	h := c.s.current()
	// A paged list keeps the holding it started with (CRCache.paging).
	paging := c.s.pagingOf(c.key)
	if p := paging.Load(); o.Continue != "" && p != nil {
		h = *p
	}
	paging.Store(&h)
	o.LabelSelector = c.s.slotSelector(o.LabelSelector, h)
	l, err := c.next.List(ctx, o)
	if err == nil {
		c.s.toldOf(c.key).listed(l, o.Continue == "")
		c.s.listedWith(c.key).Store(&h)
	}
	return l, err
}

func (c slotSelected[L]) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	h := c.s.current()
	streamed := o.SendInitialEvents != nil && *o.SendInitialEvents
	told := c.s.toldOf(c.key)
	if streamed {
		told.reset()
	}
	// The holding of the list this watch continues (CRCache.listedWith); under another
	// holding, it catches up first (catchup.go). Either way, the informer's store
	// holds that list once it reaches its resourceVersion (ready.go).
	var pre []watch.Event
	var caughtUp func()
	if l := c.s.listedWith(c.key).Load(); !streamed && l != nil {
		if l.gen == h.gen {
			h = *l
			// The reflector watches after it handed its list to the store.
			c.s.childTookList(c.key, h, o.ResourceVersion)
		} else {
			rv, events, err := c.catchUp(ctx, o.LabelSelector, h, told)
			if err != nil {
				return nil, err
			}
			o.ResourceVersion, pre = rv, events
			// Caught up only once the informer has the events (CRCache.catchUp).
			caughtUp = func() {
				c.s.listedWith(c.key).Store(&h)
				c.s.childTookList(c.key, h, rv)
			}
		}
	}
	o.LabelSelector = c.s.slotSelector(o.LabelSelector, h)
	w, err := c.next.Watch(ctx, o)
	if err != nil {
		return nil, err
	}
	fw := &filteredWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), pre: pre, caughtUp: caughtUp, told: told, blank: c.blank}
	go fw.run(nil, h, streamed)
	return fw, nil
}

// catchUp lists h's children (base: the informer's own selector) and returns the list's
// resourceVersion and the events that turn what the informer was told into it, ending
// with a bookmark there.
func (c slotSelected[L]) catchUp(ctx context.Context, base string, h holding, told *told) (string, []watch.Event, error) {
	list, err := c.next.List(ctx, metav1.ListOptions{LabelSelector: c.s.slotSelector(base, h)})
	if err != nil {
		return "", nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return "", nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return "", nil, err
	}
	c.s.mu.Lock()
	store := c.s.childStores[c.key]
	c.s.mu.Unlock()
	known := func(key string) (runtime.Object, bool) { return storeCopy(store, key) }
	events, err := told.catchUpEvents(items, nil, known, c.blank)
	if err != nil {
		return "", nil, err
	}
	return lm.GetResourceVersion(), append(events, bookmark(c.blank, lm.GetResourceVersion())), nil
}

// slotSelector is base with the slot label required in the held buckets' slots; with no
// bucket held, a value no slot has (an empty set cannot be written), so the server sends
// nothing.
func (s *Ring) slotSelector(base string, h holding) string {
	in := naming.SlotLabel + "=none"
	if slots := shard.SlotValues(h.held, s.buckets); len(slots) > 0 {
		in = naming.SlotLabel + " in (" + strings.Join(slots, ",") + ")"
	}
	if base == "" {
		return in
	}
	return base + "," + in
}

// Dynamic is dyn with its lists and watches selecting the held buckets' slots: the child
// informers' client.
func (s *Ring) Dynamic(dyn dynamic.Interface) dynamic.Interface {
	return shardedDynamic{Interface: dyn, s: s}
}

// Metadata is meta with its lists and watches selecting the held buckets' slots: the
// child informers' client.
func (s *Ring) Metadata(meta metadata.Interface) metadata.Interface {
	return shardedMetadata{Interface: meta, s: s}
}

// shardedDynamic is a dynamic client whose lists and watches select the held slots.
type shardedDynamic struct {
	dynamic.Interface
	s *Ring
}

// IsWatchListSemanticsUnSupported opts the factories' informers out of the streamed list
// (noWatchList).
func (shardedDynamic) IsWatchListSemanticsUnSupported() bool { return true }

func (d shardedDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return shardedDynamicResource{NamespaceableResourceInterface: d.Interface.Resource(gvr), s: d.s, gvr: gvr}
}

type shardedDynamicResource struct {
	dynamic.NamespaceableResourceInterface
	s   *Ring
	gvr schema.GroupVersionResource
}

func (r shardedDynamicResource) sel(next childLister[*unstructured.UnstructuredList], ns string) slotSelected[*unstructured.UnstructuredList] {
	return slotSelected[*unstructured.UnstructuredList]{next: next, s: r.s, key: ChildListKey(true, r.gvr, ns),
		blank: blankUnstructured}
}

func (r shardedDynamicResource) Namespace(ns string) dynamic.ResourceInterface {
	next := r.NamespaceableResourceInterface.Namespace(ns)
	return shardedDynamicNamespaced{ResourceInterface: next, sel: r.sel(next, ns)}
}

func (r shardedDynamicResource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.sel(r.NamespaceableResourceInterface, "").List(ctx, o)
}

func (r shardedDynamicResource) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return r.sel(r.NamespaceableResourceInterface, "").Watch(ctx, o)
}

type shardedDynamicNamespaced struct {
	dynamic.ResourceInterface
	sel slotSelected[*unstructured.UnstructuredList]
}

func (r shardedDynamicNamespaced) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.sel.List(ctx, o)
}

func (r shardedDynamicNamespaced) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return r.sel.Watch(ctx, o)
}

// shardedMetadata is a metadata client whose lists and watches select the held slots.
type shardedMetadata struct {
	metadata.Interface
	s *Ring
}

// IsWatchListSemanticsUnSupported: as shardedDynamic's.
func (shardedMetadata) IsWatchListSemanticsUnSupported() bool { return true }

func (m shardedMetadata) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return shardedMetadataGetter{Getter: m.Interface.Resource(gvr), s: m.s, gvr: gvr}
}

type shardedMetadataGetter struct {
	metadata.Getter
	s   *Ring
	gvr schema.GroupVersionResource
}

func (g shardedMetadataGetter) sel(next childLister[*metav1.PartialObjectMetadataList], ns string) slotSelected[*metav1.PartialObjectMetadataList] {
	return slotSelected[*metav1.PartialObjectMetadataList]{next: next, s: g.s, key: ChildListKey(false, g.gvr, ns),
		blank: func() runtime.Object { return &metav1.PartialObjectMetadata{} }}
}

func (g shardedMetadataGetter) Namespace(ns string) metadata.ResourceInterface {
	next := g.Getter.Namespace(ns)
	return shardedMetadataNamespaced{ResourceInterface: next, sel: g.sel(next, ns)}
}

func (g shardedMetadataGetter) List(ctx context.Context, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return g.sel(g.Getter, "").List(ctx, o)
}

func (g shardedMetadataGetter) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return g.sel(g.Getter, "").Watch(ctx, o)
}

type shardedMetadataNamespaced struct {
	metadata.ResourceInterface
	sel slotSelected[*metav1.PartialObjectMetadataList]
}

func (r shardedMetadataNamespaced) List(ctx context.Context, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return r.sel.List(ctx, o)
}

func (r shardedMetadataNamespaced) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return r.sel.Watch(ctx, o)
}
