// Package inflight is one controller's book of the long-running operations held for its
// custom resources, as this replica last persisted or read them: what
// ork_operations_in_flight counts, the start each ending is timed from, and what the
// completion callback checks a token's operation against (docs/architecture.md). The
// operations themselves live on the objects; this is only this replica's view of them.
package inflight

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/operation"
)

// Op is an operation counted held for a key.
type Op struct {
	UID       types.UID
	StartedAt time.Time
	// ID and Generation name the operation.
	ID         string
	Generation int64
}

// Book is the operations held for a controller's keys. A nil Book (a dry run, which holds
// none) counts nothing.
type Book struct {
	mu       sync.Mutex
	byKey    map[string]Op
	inFlight func(n int)
	ended    func(result string, d time.Duration)
}

// New is an empty book that reports its count to inFlight and each ending to ended.
func New(inFlight func(int), ended func(result string, d time.Duration)) *Book {
	return &Book{byKey: map[string]Op{}, inFlight: inFlight, ended: ended}
}

// Step is what a pass did to key's operation: held is what it read (nil: none), next what it
// persisted when it wrote (nil with Wrote: removed), Ended how the held one ended ("done",
// "timedOut", "replaced"; "" while it goes on).
type Step struct {
	Held, Next *operation.State
	Wrote      bool
	Ended      string
}

// Note records a pass's step for key's CR uid.
func (b *Book) Note(key string, uid types.UID, s Step, now time.Time) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, counted := b.byKey[key]; s.Held == nil && !s.Wrote && !counted {
		return // nothing held, nothing started, nothing counted: the common pass
	}
	if s.Ended != "" && s.Held != nil {
		b.ended(s.Ended, now.Sub(s.Held.StartedAt))
	}
	next := s.Held
	if s.Wrote {
		next = s.Next
	}
	if next.Held() {
		b.byKey[key] = Op{UID: uid, StartedAt: next.StartedAt, ID: next.ID, Generation: next.Generation}
	} else {
		delete(b.byKey, key)
	}
	b.inFlight(len(b.byKey))
}

// Get is the operation counted held for key; ok is false when none is.
func (b *Book) Get(key string) (op Op, ok bool) {
	if b == nil {
		return Op{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	op, ok = b.byKey[key]
	return op, ok
}

// Forget drops the keys gone says so of (a bucket moved, a CR deleted): they are no longer
// this replica's to count.
func (b *Book) Forget(gone func(key string, uid types.UID) bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, op := range b.byKey {
		if gone(k, op.UID) {
			delete(b.byKey, k)
		}
	}
	b.inFlight(len(b.byKey))
}
