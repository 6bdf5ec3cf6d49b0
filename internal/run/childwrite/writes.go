package childwrite

import (
	"crypto/sha256"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/kobj"
)

// Ref names one child object.
type Ref struct {
	gr              schema.GroupResource
	namespace, name string
}

// key is the child's informer cache key.
func (r Ref) key() string {
	if r.namespace == "" {
		return r.name
	}
	return r.namespace + "/" + r.name
}

func RefOf(gr schema.GroupResource, u metav1.Object) Ref {
	return Ref{gr: gr, namespace: u.GetNamespace(), name: u.GetName()}
}

// Event is a change of a child seen by an informer.
type Event struct {
	Ref Ref
	RV  string
	UID types.UID
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

// Book remembers ork's own child writes, for the whole engine (two CRDs may name the
// same child). It tells an informer event that is ork's write coming back from someone
// else's change (the caches keep no field ownership, so the resourceVersion is what tells
// them apart); lets a pass skip an apply whose object ork already wrote and nobody changed since;
// and tells a worker that another CR wrote a child since it last looked.
type Book struct {
	mu     sync.Mutex
	writes map[Ref]childWrite
	// pruned is the uid of each child ork is deleting (prune): every event of that object
	// until it is gone is ork's own delete coming back.
	pruned map[Ref]types.UID
	// byOwner indexes writes by the CR that wrote them, for prune: a child written just
	// before may not be in the child cache yet. A slice, not a set: a CR writes a handful
	// of children, and a small map per CR cost about four times the memory.
	byOwner map[types.UID][]Ref
}

func NewBook() *Book {
	return &Book{writes: map[Ref]childWrite{}, pruned: map[Ref]types.UID{},
		byOwner: map[types.UID][]Ref{}}
}

// Pruning notes that ork is about to delete the object uid at ref; before the request, so
// that an event racing its answer is known for ork's own.
func (b *Book) Pruning(ref Ref, uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pruned[ref] = uid
}

// pruned drops what ork knows of a child it deleted: a later answer listing it again must
// not find its old write "unchanged".
func (b *Book) prunedDone(ref Ref) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drop(ref)
}

// relisted withdraws any note of pruning of ref: the reconciler wants it again, so its
// deletion (by ork's earlier prune, or anyone's) is news from now on.
func (b *Book) relisted(ref Ref) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pruned, ref)
}

// unprune withdraws a note of pruning whose delete did not happen.
func (b *Book) unprune(ref Ref, uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pruned[ref] == uid {
		delete(b.pruned, ref)
	}
}

// Wrote records a successful write of ref onto before (nil: it did not exist) that
// returned after.
func (b *Book) Wrote(ref Ref, digest [sha256.Size]byte, owner types.UID, before, after metav1.Object) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, known := b.writes[ref]
	if !known || w.owner != owner {
		b.unindex(ref, w.owner)
		if owner != "" {
			b.byOwner[owner] = append(b.byOwner[owner], ref)
		}
	}
	prev := w.rv
	w.digest, w.rv, w.owner = digest, after.GetResourceVersion(), owner
	// A no-op write returns the version there was: the one before (or, when the cache
	// lagged, ork's own last write's).
	if (before == nil || before.GetResourceVersion() != w.rv) && prev != w.rv {
		w.made = [2]string{w.rv, w.made[0]}
	}
	b.writes[ref] = w
}

// writtenFor lists the children ork last wrote for owner.
func (b *Book) writtenFor(owner types.UID) []Ref {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.byOwner[owner])
}

// drop forgets ork's write of ref. b.mu is held.
func (b *Book) drop(ref Ref) {
	b.unindex(ref, b.writes[ref].owner)
	delete(b.writes, ref)
}

// unindex drops ref from owner's children: a linear search, as a CR writes a handful (20
// children cost at most 210 comparisons to drop them all, one by one).
func (b *Book) unindex(ref Ref, owner types.UID) {
	refs := b.byOwner[owner]
	i := slices.Index(refs, ref)
	if i < 0 {
		return
	}
	if len(refs) == 1 {
		delete(b.byOwner, owner)
		return
	}
	// Swap with the last: the order means nothing (prune sorts its candidates).
	last := len(refs) - 1
	refs[i], refs[last] = refs[last], Ref{}
	b.byOwner[owner] = refs[:last]
}

func (b *Book) get(ref Ref) (childWrite, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.writes[ref]
	return w, ok
}

// Forget drops the record of a deleted child, unless ork wrote a newer one since (a late
// delete event of the object ork has just created again). Only the owner's controller drops
// the prune mark (withPrune): two CRDs' handlers see the delete of a shared child informer
// in either order, and the other one must not consume the owner's mark before it looks.
func (b *Book) Forget(ev Event, withPrune bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w, ok := b.writes[ev.Ref]; ok && kobj.CompareRV(w.rv, ev.RV) <= 0 {
		b.drop(ev.Ref)
	}
	if withPrune && ev.UID != "" && b.pruned[ev.Ref] == ev.UID {
		delete(b.pruned, ev.Ref)
	}
}

// unchanged reports whether ork last wrote exactly digest to ref and the cached object is
// still the one that write returned: then applying again would change nothing.
func (b *Book) unchanged(ref Ref, digest [sha256.Size]byte, cachedRV string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.writes[ref]
	return ok && digest != [sha256.Size]byte{} && w.digest == digest && w.rv == cachedRV
}

// OwnDelete reports whether a child's delete is ork's own prune. A write ork made says
// nothing about a delete: after a relist, a delete ork's watch missed arrives as a tombstone
// carrying the last object seen, often the very version ork wrote.
func (b *Book) OwnDelete(ev Event) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return ev.UID != "" && b.pruned[ev.Ref] == ev.UID
}

// Own reports whether a child event is ork's own write coming back. With upTo, any version
// not newer than the state ork's last write left counts too: when the reconciler never sees
// the children, a change that ork's later write already followed needs no new call.
func (b *Book) Own(ev Event, upTo bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.UID != "" && b.pruned[ev.Ref] == ev.UID {
		return true // ork's delete under way: the deletionTimestamp, the delete itself
	}
	w, ok := b.writes[ev.Ref]
	if !ok || ev.RV == "" {
		return false
	}
	if ev.RV == w.made[0] || ev.RV == w.made[1] {
		return true
	}
	return upTo && kobj.CompareRV(ev.RV, w.rv) <= 0
}
