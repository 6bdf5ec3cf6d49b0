package run

import (
	"crypto/sha256"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// childRef names one child object.
type childRef struct {
	gr              schema.GroupResource
	namespace, name string
}

func refOf(gr schema.GroupResource, u *unstructured.Unstructured) childRef {
	return childRef{gr: gr, namespace: u.GetNamespace(), name: u.GetName()}
}

// childEvent is a change of a child seen by an informer.
type childEvent struct {
	ref childRef
	rv  string
}

// childWrite is ork's last write of a child.
type childWrite struct {
	// digest is what ork sent, rv the resourceVersion the apiserver answered, owner the CR
	// that wrote it.
	digest [sha256.Size]byte
	rv     string
	owner  types.UID
	// made are the resourceVersions of ork's last two writes that changed the object: the
	// events that are ork's own writes coming back. A write that changed nothing does not
	// add one, since that version is whoever wrote before.
	made [2]string
}

// writeBook remembers ork's own child writes, for the whole engine (two CRDs may name the
// same child). It tells an informer event that is ork's write coming back from someone
// else's change (the caches strip managedFields, so the resourceVersion is what tells them
// apart); lets a pass skip an apply whose object ork already wrote and nobody changed since;
// and tells a worker that another CR wrote a child since it last looked.
type writeBook struct {
	mu     sync.Mutex
	writes map[childRef]childWrite
}

func newWriteBook() *writeBook { return &writeBook{writes: map[childRef]childWrite{}} }

// wrote records a successful write of ref onto before (nil: it did not exist) that
// returned after.
func (b *writeBook) wrote(ref childRef, digest [sha256.Size]byte, owner types.UID, before, after *unstructured.Unstructured) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.writes[ref]
	w.digest, w.rv, w.owner = digest, after.GetResourceVersion(), owner
	if before == nil || before.GetResourceVersion() != w.rv {
		w.made = [2]string{w.rv, w.made[0]}
	}
	b.writes[ref] = w
}

func (b *writeBook) get(ref childRef) (childWrite, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.writes[ref]
	return w, ok
}

func (b *writeBook) forget(ref childRef) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.writes, ref)
}

// unchanged reports whether ork last wrote exactly digest to ref and the cached object is
// still the one that write returned: then applying again would change nothing.
func (b *writeBook) unchanged(ref childRef, digest [sha256.Size]byte, cachedRV string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.writes[ref]
	return ok && digest != [sha256.Size]byte{} && w.digest == digest && w.rv == cachedRV
}

// own reports whether a child event is ork's own write coming back. With upTo, any version
// not newer than the state ork's last write left counts too: when the reconciler never sees
// the children, a change that ork's later write already followed needs no new call.
func (b *writeBook) own(ev childEvent, upTo bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.writes[ev.ref]
	if !ok || ev.rv == "" {
		return false
	}
	if ev.rv == w.made[0] || ev.rv == w.made[1] {
		return true
	}
	return upTo && !newerRV(ev.rv, w.rv)
}

// childLocks serialise the writes of one child across ork's workers; a child hashes to one
// of a fixed set of locks, so two unrelated children rarely wait for each other.
type childLocks [64]sync.Mutex

func (l *childLocks) lock(ref childRef) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ref.gr.String() + "/" + ref.namespace + "/" + ref.name))
	m := &l[h.Sum32()%uint32(len(l))]
	m.Lock()
	return m.Unlock
}

// newerRV reports whether resourceVersion a is newer than b. resourceVersions are opaque to
// clients, but every apiserver backed by etcd issues increasing integers; when either is not
// one, a is taken as newer, which only costs a reconcile.
func newerRV(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return true
	}
	return x > y
}

// digestOf is a stable digest of an object about to be written (encoding/json sorts map
// keys).
func digestOf(obj map[string]any) [sha256.Size]byte {
	b, err := json.Marshal(obj)
	if err != nil {
		return [sha256.Size]byte{} // unchanged never matches it: the apply is not skipped
	}
	return sha256.Sum256(b)
}
