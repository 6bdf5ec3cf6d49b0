package shardring

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// holding is one generation of the held buckets, as the CR caches select on it.
type holding struct {
	// sel is the held buckets' selector; nil when none is held (then nothing passes the
	// client filter, and no selector is sent: an empty one would mean every object).
	sel sharding.Selector
	// held are the buckets sel selects, for the child caches' slots.
	held []int
	gen  uint64
	// changed is closed when the next generation starts: the watches of this one end.
	changed chan struct{}
}

// CRCache lists and watches one CRD's custom resources (in one namespace, or all) for a
// sharded replica: the server is asked for the held buckets' objects only
// (ListOptions.ShardSelector), and every object is checked again here, since a server
// without the ShardedListAndWatch gate ignores the selector. A change of the held buckets
// ends the watch as expired, so that the informer lists again with the new selector: the
// newly held buckets' objects arrive as adds, the released ones' leave as deletes.
type CRCache struct {
	s   *Ring
	res dynamic.ResourceInterface
	crd string
	// sendSelector is false to prove the client filter alone (Options.ShardClientFilterOnly).
	sendSelector bool
	// listed and synced are 1 + the generation whose list completed, and whose list
	// completed and was followed by its watch (0: none yet).
	listed, synced atomic.Uint64
	// listedWith is the holding of the last completed list (or catch-up): a watch that
	// continues it under another holding catches up first (catchup.go), instead of
	// watching the new buckets without their objects.
	listedWith atomic.Pointer[holding]
	// told is what the informer has been told; store is the informer's own (the last copy
	// of an object a catch-up deletes).
	told  *told
	store cache.Store
	// paging is the holding a paged list started with: its later pages use the same, so
	// that one list never mixes two holdings.
	paging atomic.Pointer[holding]
}

// NewCRCache is the CR cache of the CRD crd (its resource gvr) in namespace (all: ""); with
// sendSelector false the server is sent no selector, to prove the client filter alone.
func (s *Ring) NewCRCache(dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, crd string, sendSelector bool) *CRCache {
	// Both counters show from the start: a zero is the news that the server filtered.
	s.metrics.CRsReceived.WithLabelValues(crd)
	s.metrics.CRsDropped.WithLabelValues(crd)
	cc := &CRCache{s: s, res: dyn.Resource(gvr).Namespace(namespace), crd: crd, sendSelector: sendSelector, told: newTold()}
	s.mu.Lock()
	s.crCaches = append(s.crCaches, cc) // UpToDate asks every one
	s.mu.Unlock()
	return cc
}

func blankUnstructured() runtime.Object { return &unstructured.Unstructured{} }

// Informer is the cache's informer, indexed by namespace as the unsharded one.
func (c *CRCache) Informer() cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc:  c.list,
		WatchFuncWithContext: c.watch,
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{}), &unstructured.Unstructured{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	c.store = inf.GetStore()
	return inf
}

// UpToDate reports whether the cache has listed with the current holding.
func (c *CRCache) UpToDate() bool { return c.synced.Load() == c.s.current().gen+1 }

func (c *CRCache) list(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	h := c.s.current()
	if p := c.paging.Load(); o.Continue != "" && p != nil {
		h = *p
	}
	c.paging.Store(&h)
	if h.sel == nil {
		return c.nothing(ctx, h)
	}
	c.selectOn(h, &o)
	list, err := c.res.List(ctx, o)
	if err != nil {
		return nil, err
	}
	kept := list.Items[:0]
	for i := range list.Items {
		if c.pass(h, &list.Items[i]) {
			kept = append(kept, list.Items[i])
		}
	}
	list.Items = kept
	c.told.listed(list, o.Continue == "")
	c.listed.Store(h.gen + 1)
	c.listedWith.Store(&h)
	return list, nil
}

func (c *CRCache) watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	h := c.s.current()
	streamed := o.SendInitialEvents != nil && *o.SendInitialEvents
	if streamed {
		c.told.reset()
	}
	if l := c.listedWith.Load(); !streamed && l != nil {
		if l.gen != h.gen {
			return c.catchUp(ctx, o, h)
		}
		h = *l
	}
	c.selectOn(h, &o)
	var w watch.Interface
	var err error
	if h.sel == nil {
		w, err = c.idle(ctx, streamed)
	} else {
		w, err = c.res.Watch(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	if !streamed && c.listed.Load() == h.gen+1 {
		c.synced.Store(h.gen + 1)
	}
	fw := &filteredWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), told: c.told, blank: blankUnstructured}
	go fw.run(c, h, streamed)
	return fw, nil
}

// catchUp is the watch that continues a list made under another holding, now that h is
// current: it lists h's objects and sends first the events that turn what the informer
// was told into them (a CR owed its take pass is sent even when unchanged), then a
// bookmark at the list's resourceVersion, then the server's events from there.
func (c *CRCache) catchUp(ctx context.Context, o metav1.ListOptions, h holding) (watch.Interface, error) {
	var items []runtime.Object
	var rv string
	if h.sel == nil {
		list, err := c.nothing(ctx, h)
		if err != nil {
			return nil, err
		}
		rv = list.GetResourceVersion()
	} else {
		lo := metav1.ListOptions{}
		c.selectOn(h, &lo)
		list, err := c.res.List(ctx, lo)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			if c.pass(h, &list.Items[i]) {
				items = append(items, &list.Items[i])
			}
		}
		rv = list.GetResourceVersion()
	}
	// Owed by the take counts, not by which buckets the two holdings name: a bucket lost
	// and taken back between them is in both, and owes its pass all the same.
	resend := func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		return err == nil && c.s.owesPass(m.GetUID())
	}
	known := func(key string) (runtime.Object, bool) { return storeCopy(c.store, key) }
	events, err := c.told.catchUpEvents(items, resend, known, blankUnstructured)
	if err != nil {
		return nil, err
	}
	o.ResourceVersion = rv
	c.selectOn(h, &o)
	var w watch.Interface = watch.NewFake()
	if h.sel != nil {
		if w, err = c.res.Watch(ctx, o); err != nil {
			return nil, err
		}
	}
	// Caught up only once the informer has the events: a watch that fails or is stopped
	// before leaves the next one to catch up again.
	caughtUp := func() {
		c.listed.Store(h.gen + 1)
		c.listedWith.Store(&h)
		c.synced.Store(h.gen + 1)
	}
	fw := &filteredWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), told: c.told, blank: blankUnstructured,
		pre: append(events, bookmark(blankUnstructured, rv)), caughtUp: caughtUp}
	go fw.run(c, h, false)
	return fw, nil
}

// noWatchList opts a sharded cache's informer out of client-go's streamed list (watch-list):
// a holding change is caught up in a plain watch that continues a list (catchup.go),
// and a streamed list has no list to continue.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// nothing is the list while no bucket is held: no object, at the collection's current
// resourceVersion (one item asked for, none kept), so that an idle replica caches nothing.
func (c *CRCache) nothing(ctx context.Context, h holding) (*unstructured.UnstructuredList, error) {
	list, err := c.res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	list.Items = nil
	list.SetContinue("")
	list.SetRemainingItemCount(nil)
	c.told.listed(list, true)
	c.listed.Store(h.gen + 1)
	c.listedWith.Store(&h)
	return list, nil
}

// idle is the watch while no bucket is held: no event until the holding changes (then
// expired); a streamed list ends at once, at the collection's current resourceVersion.
func (c *CRCache) idle(ctx context.Context, streamed bool) (watch.Interface, error) {
	w := watch.NewFake()
	if !streamed {
		return w, nil
	}
	list, err := c.res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	end := &unstructured.Unstructured{}
	end.SetResourceVersion(list.GetResourceVersion())
	end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	go func() {
		defer func() { _ = recover() }() // stopped before the bookmark was read
		w.Action(watch.Bookmark, end)
	}()
	return w, nil
}

func (c *CRCache) selectOn(h holding, o *metav1.ListOptions) {
	if h.sel != nil && c.sendSelector {
		o.ShardSelector = h.sel.String()
	}
}

// pass is the client filter: whether obj is of a bucket of h.
func (c *CRCache) pass(h holding, obj runtime.Object) bool {
	c.s.metrics.CRsReceived.WithLabelValues(c.crd).Inc()
	ok := false
	if h.sel != nil {
		ok, _ = h.sel.Matches(obj)
	}
	if !ok {
		c.s.metrics.CRsDropped.WithLabelValues(c.crd).Inc()
	}
	return ok
}

// filteredWatch is a watch through the client filter (none for a nil CRCache), ended when
// the holding changes: normally, so that the reflector watches again at once and that
// watch catches up (catchup.go); as expired (the reflector lists again) while the
// initial events of a streamed list are still coming.
type filteredWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
	// pre are a catch-up's events, sent before the inner watch's; caughtUp, if set, is
	// called once the informer has received them all.
	pre      []watch.Event
	caughtUp func()
	// told records what the informer received; blank makes the bookmark's object.
	told  *told
	blank func() runtime.Object
}

func (w *filteredWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *filteredWatch) Stop() { w.once.Do(func() { close(w.stop) }) }

func (w *filteredWatch) run(c *CRCache, h holding, streamed bool) {
	defer close(w.out)
	defer w.inner.Stop()
	send := func(ev watch.Event) bool {
		select {
		case w.out <- ev:
			w.told.sent(ev)
			return true
		case <-w.stop:
			return false
		}
	}
	for _, ev := range w.pre {
		if !send(ev) {
			return
		}
	}
	if w.caughtUp != nil {
		w.caughtUp()
	}
	for {
		select {
		case <-w.stop:
			return
		case <-h.changed:
			if streamed {
				send(expired("the held shard buckets changed"))
				return
			}
			// A bookmark first: a watch that ends with no event inside a second is a
			// failure to the reflector, which would then wait its back-off and list.
			send(bookmark(w.blank, w.told.lastRV()))
			return
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			switch {
			case c == nil: // a child cache: the server's label selector is the whole filter
			case ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted:
				if !c.pass(h, ev.Object) {
					continue
				}
			case ev.Type == watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); streamed && err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					c.synced.Store(h.gen + 1)
				}
			}
			if !send(ev) {
				return
			}
		}
	}
}
