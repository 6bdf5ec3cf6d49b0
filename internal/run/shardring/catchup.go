package shardring

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// A change of the held buckets must reach the sharded caches: the newly held buckets'
// objects added, the released ones' removed. Ending the watch as expired does it (the
// reflector lists again), but client-go's reflector waits its back-off before every list
// after the first (0.8 s, doubling to 30 s, reset only after two quiet minutes, jittered up
// to twice that): a ring that moves buckets a few times in a row (start-up, a rollout, a
// failover and a join) left its caches down for tens of seconds. So the change is caught
// up inside the watch stream instead: the watch ends normally (after a bookmark, so that
// the reflector counts it as a watch and not a failure), the reflector watches again at
// once, and that watch lists with the new holding and sends first the events that turn
// what the informer was told into that list, then a bookmark at the list's
// resourceVersion, then the server's events from there.
//
// What the informer was told is kept here (told: each object's key, uid, resourceVersion,
// labels and owners),
// not read from its store: the store lags the events still queued in the informer's FIFO,
// and a diff against it would send some deletes twice. The store gives only the content of
// a delete.

// told is what a sharded cache's informer has been told: the objects of its last list and
// the events since, by key, with what a delete needs when the store has no copy.
type told struct {
	mu   sync.Mutex
	objs map[string]toldObject
	// rv is the resourceVersion of the last list or event: the bookmark sent when a
	// holding change ends the watch.
	rv string
}

// toldObject is what a delete needs when the informer's store has no copy of the object
// (its add still queued, as right after a take): the child handlers find the owner by its
// ownerReferences and labels.
type toldObject struct {
	rv     string
	uid    types.UID
	labels map[string]string
	owners []metav1.OwnerReference
}

func newTold() *told { return &told{objs: map[string]toldObject{}} }

// pagingOf is the holding the paged list of the child informer of key started with.
func (s *Ring) pagingOf(key string) *atomic.Pointer[holding] {
	p, _ := s.childPaging.LoadOrStore(key, &atomic.Pointer[holding]{})
	return p.(*atomic.Pointer[holding])
}

// toldOf is what the child informer of key was told.
func (s *Ring) toldOf(key string) *told {
	t, _ := s.childTold.LoadOrStore(key, newTold())
	return t.(*told)
}

// listed records a list (a page of it: the first page, Continue empty, starts afresh).
func (t *told) listed(list runtime.Object, first bool) {
	items, _ := meta.ExtractList(list)
	t.mu.Lock()
	defer t.mu.Unlock()
	if first {
		clear(t.objs)
	}
	for _, obj := range items {
		t.put(obj)
	}
	if m, err := meta.ListAccessor(list); err == nil {
		t.rv = m.GetResourceVersion()
	}
}

// reset forgets everything: a streamed list (watch with initial events) tells it anew.
func (t *told) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.objs)
}

// sent records an event the informer received.
func (t *told) sent(ev watch.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		t.put(ev.Object)
	case watch.Deleted:
		if key, err := cache.MetaNamespaceKeyFunc(ev.Object); err == nil {
			delete(t.objs, key)
		}
	}
	if m, err := meta.Accessor(ev.Object); err == nil && m.GetResourceVersion() != "" {
		t.rv = m.GetResourceVersion()
	}
}

func (t *told) put(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	t.objs[key] = toldObject{rv: m.GetResourceVersion(), uid: m.GetUID(), labels: m.GetLabels(), owners: m.GetOwnerReferences()}
}

func (t *told) lastRV() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rv
}

// catchUpEvents are the events that turn what t holds into the list items (already
// through any client filter): an add for an object it lacks, a modify for one whose
// resourceVersion moved or for which resend says so (a CR owed its take pass even when the
// informer holds it unchanged), a delete for one no longer listed. known gives a copy of
// the informer's last copy of a deleted object (a CR's delete pass needs the whole object),
// used when its uid is the one told; else the delete carries the name, uid,
// resourceVersion, labels and owners kept here, in an object from blank.
func (t *told) catchUpEvents(items []runtime.Object, resend func(runtime.Object) bool,
	known func(key string) (runtime.Object, bool), blank func() runtime.Object) ([]watch.Event, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []watch.Event
	listed := make(map[string]bool, len(items))
	for _, obj := range items {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return nil, fmt.Errorf("catch up: %w", err)
		}
		listed[key] = true
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("catch up %s: %w", key, err)
		}
		switch prev, ok := t.objs[key]; {
		case !ok:
			out = append(out, watch.Event{Type: watch.Added, Object: obj})
		case prev.rv != m.GetResourceVersion() || (resend != nil && resend(obj)):
			out = append(out, watch.Event{Type: watch.Modified, Object: obj})
		}
	}
	for key, prev := range t.objs {
		if listed[key] {
			continue
		}
		var obj runtime.Object
		if known != nil {
			// The store's copy only if it is this object: the store may still hold a
			// previous object of the name (its delete and the new one's add queued).
			if o, ok := known(key); ok {
				if m, err := meta.Accessor(o); err == nil && m.GetUID() == prev.uid {
					obj = o
				}
			}
		}
		if obj == nil {
			obj = blank()
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, fmt.Errorf("catch up %s: %w", key, err)
			}
			ns, name, _ := cache.SplitMetaNamespaceKey(key)
			m.SetNamespace(ns)
			m.SetName(name)
			m.SetUID(prev.uid)
			m.SetResourceVersion(prev.rv)
			m.SetLabels(prev.labels)
			m.SetOwnerReferences(prev.owners)
		}
		out = append(out, watch.Event{Type: watch.Deleted, Object: obj})
	}
	return out, nil
}

// storeCopy returns a copy of store's object of key, for known; false when it has none.
func storeCopy(store cache.Store, key string) (runtime.Object, bool) {
	if store == nil {
		return nil, false
	}
	obj, ok, err := store.GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil, false
	}
	// A copy: the informer's transform edits what it is given, and readers share the
	// cached object.
	return ro.DeepCopyObject(), true
}

// bookmark is a bookmark event at rv, in an object from blank.
func bookmark(blank func() runtime.Object, rv string) watch.Event {
	obj := blank()
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(rv)
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// expired is the event that ends a watch so that the reflector lists again.
func expired(why string) watch.Event {
	return watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
		Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: why}}
}
