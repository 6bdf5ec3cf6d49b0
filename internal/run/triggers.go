package run

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Trigger says why a key is reconciled; it is sent as prepared.trigger.
type Trigger string

// Triggers, from the strongest: a pending delete is never downgraded by a later resync.
const (
	TriggerDelete  Trigger = "delete"
	TriggerCreate  Trigger = "create"
	TriggerUpdate  Trigger = "update"
	TriggerChild   Trigger = "child"
	TriggerResync  Trigger = "resync"
	TriggerRequeue Trigger = "requeue"
)

var triggerRank = map[Trigger]int{TriggerDelete: 5, TriggerCreate: 4, TriggerUpdate: 3, TriggerChild: 2, TriggerResync: 1}

// triggerBook remembers, per queued key, the strongest trigger since it was last processed,
// and the last state of deleted objects (the cache no longer has them).
type triggerBook struct {
	mu         sync.Mutex
	pending    map[string]Trigger
	tombstones map[string]*unstructured.Unstructured
}

func newTriggerBook() *triggerBook {
	return &triggerBook{pending: map[string]Trigger{}, tombstones: map[string]*unstructured.Unstructured{}}
}

func (b *triggerBook) note(key string, t Trigger) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if triggerRank[t] > triggerRank[b.pending[key]] {
		b.pending[key] = t
	}
	// Only the object's own return (create/update) retires its tombstone: a child event or
	// resync arriving after the delete must not lose the deleting: true call.
	if t == TriggerCreate || t == TriggerUpdate {
		delete(b.tombstones, key)
	}
}

func (b *triggerBook) noteDelete(key string, last *unstructured.Unstructured) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[key] = TriggerDelete
	b.tombstones[key] = last
}

// take returns the pending trigger, or requeue when the key came back from the queue itself.
func (b *triggerBook) take(key string) Trigger {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.pending[key]
	delete(b.pending, key)
	if !ok {
		return TriggerRequeue
	}
	return t
}

func (b *triggerBook) tombstone(key string) *unstructured.Unstructured {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tombstones[key]
}

func (b *triggerBook) forgetTombstone(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tombstones, key)
}
