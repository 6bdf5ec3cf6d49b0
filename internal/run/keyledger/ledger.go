// Package keyledger is a controller's memory of its keys between passes: the trigger each
// key owes, the tombstones of deleted objects, the next resync, and the per-object memos
// ork keeps (what applying the last answer did, the finalized and removed marks, ork's last
// status write).
package keyledger

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/childwrite"
)

// Trigger says why a key is reconciled; it is sent as prepared.trigger.
type Trigger string

// Triggers, from the strongest: a pending delete is never downgraded by a later resync.
const (
	TriggerDelete  Trigger = "delete"
	TriggerCreate  Trigger = "create"
	TriggerUpdate  Trigger = "update"
	TriggerChild   Trigger = "child"
	TriggerRelated Trigger = "related" // an object payload.related read in the CR's last pass changed
	TriggerResync  Trigger = "resync"
	TriggerRequeue Trigger = "requeue"
)

// rank orders the triggers as the list above does; a child's and a related object's change
// weigh the same, and nothing pending ranks below every trigger.
func (t Trigger) rank() int {
	switch t {
	case TriggerDelete:
		return 6
	case TriggerCreate:
		return 5
	case TriggerUpdate:
		return 4
	case TriggerChild, TriggerRelated:
		return 3
	case TriggerResync:
		return 2
	case TriggerRequeue:
		return 1
	}
	return 0
}

// Ledger is a controller's memory of its keys between passes. Every queue add is preceded by
// a note of its trigger here, so a key that comes out of the queue with nothing pending (a
// delayed add overtaken by a pass that already ran) costs no call. It is safe for
// concurrent use.
type Ledger struct {
	mu   sync.Mutex
	keys map[string]*keyRecord
}

// keyRecord is what the ledger holds for one key.
type keyRecord struct {
	// pending is the strongest trigger since the key was last taken.
	pending Trigger
	// changesOnly: every trigger since the key was last taken was a child's or a related
	// object's change (ChildMinInterval applies); a requeue or resync owed beside one is not
	// held to it.
	changesOnly bool
	// tombstones are the last states of deleted objects, oldest first, one per uid, each
	// kept until its delete is done: a name deleted, created again and deleted again before
	// ork's pass owes two deletes.
	tombstones []*unstructured.Unstructured
	// statusUID and statusRV identify ork's last status write: the object it went to and
	// the resourceVersion the apiserver answered. A cache older than that is not trusted.
	statusUID types.UID
	statusRV  string
	// lastPass is when the last pass of this key ended (ChildMinInterval).
	lastPass time.Time
	// processing is true while a worker reconciles the key.
	processing bool
	// deferred are child changes seen while the key was processing (the latest version of
	// each child); whether they are ork's own writes coming back is known only once the pass
	// has recorded them.
	deferred map[childwrite.Ref]childwrite.Event
	// warnedNoStatus is the uid whose missing status subresource was reported.
	warnedNoStatus types.UID
	// finalizedUID is the object whose deleting call the reconciler answered ok, its
	// finalizer lifted (reconcile.remote.finalize): its later passes and its delete event
	// cost no call.
	finalizedUID types.UID
	// lastApply is what applying the last answer of the object lastApplyUID did
	// (prepared.lastApply).
	lastApplyUID types.UID
	lastApply    []remote.AppliedResource
	// removedUID is the object whose declarative onDelete ran: it runs once.
	removedUID types.UID
	// resyncAt is when the key's periodic resync is due (reconcile.resync); zero when none
	// is scheduled. A pass before it moves it on.
	resyncAt time.Time
	// passedUID is the object whose first pass in this holder's life has run
	// (reconcile.remote.skipUnchanged: only that pass may skip its call).
	passedUID types.UID
}

// New returns an empty ledger.
func New() *Ledger { return &Ledger{keys: map[string]*keyRecord{}} }

func (l *Ledger) record(key string) *keyRecord {
	r := l.keys[key]
	if r == nil {
		r = &keyRecord{}
		l.keys[key] = r
	}
	return r
}

// Note records trigger t for key and returns the time the key's last pass ended, or now
// while a pass runs: that pass counts as the last, so a change seen during it waits a whole
// ChildMinInterval instead of running the next pass the moment this one ends.
func (l *Ledger) Note(key string, t Trigger) time.Time {
	return l.NoteObject(key, t, "")
}

// NoteObject is note for an event of the object with uid. Only that object's own return
// (create/update of the same uid: it was not gone after all) retires its tombstone: a child
// event or resync arriving after the delete must not lose the deleting: true call, and
// neither may a new object created under the same name, which is reconciled after it.
func (l *Ledger) NoteObject(key string, t Trigger, uid types.UID) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.record(key)
	isChange := t == TriggerChild || t == TriggerRelated
	r.changesOnly = isChange && (r.pending == "" || r.changesOnly)
	if t.rank() > r.pending.rank() {
		r.pending = t
	}
	if uid != "" {
		r.tombstones = slices.DeleteFunc(r.tombstones, func(t *unstructured.Unstructured) bool { return t.GetUID() == uid })
	}
	if r.processing {
		return time.Now()
	}
	return r.lastPass
}

// NoteDelete records the delete of last: a later state of an object already pending
// replaces it, another object's is kept beside it.
func (l *Ledger) NoteDelete(key string, last *unstructured.Unstructured) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.record(key)
	r.pending, r.changesOnly = TriggerDelete, false
	for i, t := range r.tombstones {
		if t.GetUID() == last.GetUID() {
			r.tombstones[i] = last
			return
		}
	}
	r.tombstones = append(r.tombstones, last)
}

// TooSoon is how long key must still wait when all that is pending is a child's or a
// related object's change and its last pass ended less than minInterval before now; zero
// otherwise. Adds made for such changes are delayed already, but a change seen between the
// queue handing the key out and the pass beginning marks it to run again at once.
func (l *Ledger) TooSoon(key string, now time.Time, minInterval time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	if r == nil || !r.changesOnly || r.lastPass.IsZero() {
		return 0
	}
	return max(0, minInterval-now.Sub(r.lastPass))
}

// Begin takes the pending trigger of a key coming out of the queue and marks it processing.
// With nothing pending it is the key's resync when that is due; else ok is false: the add
// was overtaken by a pass that already ran.
func (l *Ledger) Begin(key string, now time.Time) (t Trigger, tomb *unstructured.Unstructured, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	if r == nil {
		return "", nil, false // forgotten: a delayed add of a key whose object is gone
	}
	t, r.pending, r.changesOnly = r.pending, "", false
	if t == "" && !r.resyncAt.IsZero() && !now.Before(r.resyncAt) {
		t = TriggerResync
	}
	if t == "" {
		return "", nil, false
	}
	r.resyncAt = time.Time{}
	r.processing = true
	if len(r.tombstones) > 0 {
		tomb = r.tombstones[0]
	}
	return t, tomb, true
}

// End marks a pass over at now and returns the child changes deferred during it. With
// forget (the object is gone and its delete done), the record goes unless something new
// arrived.
func (l *Ledger) End(key string, now time.Time, forget bool) []childwrite.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	if r == nil {
		return nil
	}
	var deferred []childwrite.Event
	for _, ev := range r.deferred {
		deferred = append(deferred, ev)
	}
	r.processing, r.deferred, r.lastPass = false, nil, now
	if forget && r.pending == "" && len(r.tombstones) == 0 {
		delete(l.keys, key)
	}
	return deferred
}

// DeferIfProcessing keeps a child change for the end of the running pass; false when the
// key is not processing.
func (l *Ledger) DeferIfProcessing(key string, ev childwrite.Event) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	if r == nil || !r.processing {
		return false
	}
	if r.deferred == nil {
		r.deferred = map[childwrite.Ref]childwrite.Event{}
	}
	r.deferred[ev.Ref] = ev
	return true
}

// DropTombstone forgets the tombstone a finished delete used, and only that one: a newer
// delete that arrived during the pass keeps its own. It reports whether deletes remain.
func (l *Ledger) DropTombstone(key string, used *unstructured.Unstructured) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	if r == nil {
		return false
	}
	r.tombstones = slices.DeleteFunc(r.tombstones, func(t *unstructured.Unstructured) bool { return t == used })
	return len(r.tombstones) > 0
}

// StatusWrite returns ork's last status write to key.
func (l *Ledger) StatusWrite(key string) (types.UID, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.keys[key]; r != nil {
		return r.statusUID, r.statusRV
	}
	return "", ""
}

// WroteStatus records ork's status write to key: the object uid, answered with
// resourceVersion rv.
func (l *Ledger) WroteStatus(key string, uid types.UID, rv string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.record(key)
	r.statusUID, r.statusRV = uid, rv
}

// WarnNoStatus reports whether the missing status subresource is still to be reported for
// this incarnation, and marks it reported.
func (l *Ledger) WarnNoStatus(key string, uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.record(key)
	if r.warnedNoStatus == uid {
		return false
	}
	r.warnedNoStatus = uid
	return true
}

// ResyncDue is when the key's resync is due, zero when none is scheduled.
func (l *Ledger) ResyncDue(key string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.keys[key]; r != nil {
		return r.resyncAt
	}
	return time.Time{}
}

// ResyncAfter schedules the key's next periodic resync at now+d (the caller queues it).
func (l *Ledger) ResyncAfter(key string, now time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(key).resyncAt = now.Add(d)
}

// MarkFinalized notes that the reconciler answered ok to uid's delete.
func (l *Ledger) MarkFinalized(key string, uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(key).finalizedUID = uid
}

// Finalized reports whether the reconciler answered ok to uid's delete.
func (l *Ledger) Finalized(key string, uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	return r != nil && uid != "" && r.finalizedUID == uid
}

// SetLastApply keeps what applying uid's last answer did.
func (l *Ledger) SetLastApply(key string, uid types.UID, report []remote.AppliedResource) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.record(key)
	r.lastApplyUID, r.lastApply = uid, report
}

// LastApply is what applying uid's last answer did; nil when nothing was applied to this
// object since ork started.
func (l *Ledger) LastApply(key string, uid types.UID) []remote.AppliedResource {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.keys[key]; r != nil && r.lastApplyUID == uid {
		return r.lastApply
	}
	return nil
}

// MarkRemoved notes that uid's onDelete objects were deleted.
func (l *Ledger) MarkRemoved(key string, uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(key).removedUID = uid
}

// Removed reports whether uid's onDelete objects were deleted already.
func (l *Ledger) Removed(key string, uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	return r != nil && uid != "" && r.removedUID == uid
}

// FirstPass reports whether this is the first pass of uid in this holder's life (since the
// start, a leadership won, or its bucket taken), and marks it passed.
func (l *Ledger) FirstPass(key string, uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.record(key)
	if r.passedUID == uid {
		return false
	}
	r.passedUID = uid
	return true
}

// ForgetObjects drops what the ledger remembers of the objects for which gone is true (their
// bucket moves between replicas, and another may write them meanwhile): what applying their
// last answer did, the finalized and removed marks, ork's last status write, the first pass
// run. A record left
// with nothing owed (no pending trigger, delete or pass) goes with them.
func (l *Ledger) ForgetObjects(gone func(types.UID) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, r := range l.keys {
		hit := false
		forget := func(uid *types.UID) {
			if *uid != "" && gone(*uid) {
				*uid, hit = "", true
			}
		}
		forget(&r.lastApplyUID)
		if r.lastApplyUID == "" {
			r.lastApply = nil
		}
		forget(&r.finalizedUID)
		forget(&r.removedUID)
		forget(&r.passedUID)
		forget(&r.statusUID)
		if r.statusUID == "" {
			r.statusRV = ""
		}
		if hit && !r.processing && r.pending == "" && len(r.tombstones) == 0 && len(r.deferred) == 0 && r.resyncAt.IsZero() {
			delete(l.keys, key)
		}
	}
}
