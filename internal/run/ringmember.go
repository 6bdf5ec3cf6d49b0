package run

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/run/shardring"
)

// The controller's side of the shard ring: what the ring asks of a controller (ringMember),
// and what the controller's handlers ask of the ring through the engine's gate.

// ringMember is a controller as the ring knows it (shardring.Member): comparable, so that
// the ring can keep the keys of each waiting for its bucket.
type ringMember struct{ c *controller }

func (m ringMember) ForgetObjects(gone func(types.UID) bool) { m.c.forgetObjects(gone) }

func (m ringMember) Requeue(key string) { m.c.add(key, addOpts{}) }

// onAdd queues a CR the cache added: the initial list's, and a taken bucket's backlog, in
// the slow lane; a create seen later in the fast lane.
func (c *controller) onAdd(obj any, initial bool) {
	c.notePass(obj)
	c.enqueue(obj, TriggerCreate, !initial && !c.takenBacklog(obj, false))
}

// onSync is a relist's sight of a CR the cache already held, unchanged: in a sharded cache
// it is no news, unless the CR is owed its bucket's take pass (slow lane, as the take's
// backlog that arrives as adds).
func (c *controller) onSync(obj any) {
	if c.notePass(obj) {
		c.enqueue(obj, TriggerCreate, false)
	}
}

// notePass is the gate's takePass for obj (false unsharded).
func (c *controller) notePass(obj any) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return c.e.gate.takePass(m.GetUID())
}

// takenBacklog reports whether obj, added to a sharded cache, was there before its bucket
// was taken (a CR, or with child a child by its controller's uid): a CR's one pass is in
// the slow lane, as the initial list's, and a child's add passes nothing.
func (c *controller) takenBacklog(obj any, child bool) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	uid := m.GetUID()
	if child {
		ref := metav1.GetControllerOf(m)
		if ref == nil {
			return false
		}
		uid = ref.UID
	}
	return c.e.gate.backlog(uid, m.GetCreationTimestamp().Time)
}

// revealed queues the owner of a child the ring's take-time labelling just labelled, now
// that the child cache shows it, and reports whether it did: the owner's take pass may
// have run before, without the child. The slow lane (the take's backlog), no sooner than
// ChildMinInterval after the owner's last pass, as for a child's change.
func (c *controller) revealed(obj any) bool {
	if c.e.ring == nil {
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
	if !c.e.ring.Revealed(u.GetUID()) {
		return false
	}
	c.countTrigger(TriggerChild)
	c.add(key, addOpts{trigger: TriggerChild, minInterval: c.e.opts.ChildMinInterval})
	return true
}

// childStoresOf is each child informer's store, by shardring.ChildListKey: the ring's readiness
// waits for every one of them.
func childStoresOf(controllers []*controller, needFull map[schema.GroupResource]bool) map[string]cache.Store {
	out := map[string]cache.Store{}
	for _, c := range controllers {
		for _, ch := range c.children {
			for i, inf := range ch.informer.Informers() {
				ns := metav1.NamespaceAll
				if ch.informer.Namespaces() != nil {
					ns = ch.informer.Namespaces()[i]
				}
				out[shardring.ChildListKey(needFull[ch.gvr.GroupResource()], ch.gvr, ns)] = inf.GetStore()
			}
		}
	}
	return out
}
