package childwrite

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// childLockWait bounds how long a pass waits for the locks of the children it must check:
// past it the pass fails and backs off rather than hold its worker behind another pass.
const childLockWait = 10 * time.Second

// Locks serialise, across every worker of every CRD (two CRDs may name the same
// child), the ownership check of one child with the create or adoption write that follows
// it: two CRs that both find a child absent cannot both create it. There is one lock per
// child key, not a shared set, so passes over unrelated children never wait for each other;
// an entry lives only while a pass holds or waits for it, so memory does not grow with
// every child ever written.
type Locks struct {
	mu    sync.Mutex
	locks map[Ref]*childLock
}

// childLock is one child's lock: sem holds a token while a pass holds it; users counts the
// passes holding or waiting for it (the entry goes when it drops to zero).
type childLock struct {
	sem   chan struct{}
	users int
}

func NewLocks() *Locks { return &Locks{locks: map[Ref]*childLock{}} }

// entry returns ref's lock, made if needed, counted as used by one more pass.
func (l *Locks) entry(ref Ref) *childLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.locks[ref]
	if !ok {
		e = &childLock{sem: make(chan struct{}, 1)}
		l.locks[ref] = e
	}
	e.users++
	return e
}

// drop ends one pass's use of ref's lock, removing the entry when no pass uses it.
func (l *Locks) drop(ref Ref, e *childLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.users--; e.users == 0 {
		delete(l.locks, ref)
	}
}

// size is the number of entries: the children some pass holds or waits for.
func (l *Locks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}

// lock takes the locks of refs in one order whatever the order of refs (two passes never
// deadlock), waiting at most wait for all of them and no longer than ctx. waited is told
// how long each lock took. On failure nothing is held.
func (l *Locks) lock(ctx context.Context, refs []Ref, wait time.Duration, waited func(time.Duration)) (*heldLocks, error) {
	h := &heldLocks{l: l, held: make(map[Ref]*childLock, len(refs))}
	if len(refs) == 0 {
		return h, nil
	}
	refs = slices.Clone(refs)
	slices.SortFunc(refs, compareRefs)
	refs = slices.Compact(refs)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, ref := range refs {
		e := l.entry(ref)
		start := time.Now()
		select {
		case e.sem <- struct{}{}:
			h.held[ref] = e
			if waited != nil {
				waited(time.Since(start))
			}
			continue
		case <-deadline.C:
			l.drop(ref, e)
			h.releaseAll()
			return nil, failed(reasonApplyFailed, "waited %s for the ownership check of %s/%s", wait, ref.gr.Resource, ref.name)
		case <-ctx.Done():
			l.drop(ref, e)
			h.releaseAll()
			return nil, failed(reasonApplyFailed, "wait for the ownership check of %s/%s: %v", ref.gr.Resource, ref.name, context.Cause(ctx))
		}
	}
	return h, nil
}

func compareRefs(a, b Ref) int {
	return cmp.Or(cmp.Compare(a.gr.Group, b.gr.Group), cmp.Compare(a.gr.Resource, b.gr.Resource),
		cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
}

// heldLocks are the child locks one pass holds; each is released after its child's first
// write, the rest when the pass's writes end.
type heldLocks struct {
	l    *Locks
	held map[Ref]*childLock
}

// release lets ref's lock go, if held.
func (h *heldLocks) release(ref Ref) {
	e, ok := h.held[ref]
	if !ok {
		return
	}
	delete(h.held, ref)
	<-e.sem
	h.l.drop(ref, e)
}

// releaseAll lets every lock still held go.
func (h *heldLocks) releaseAll() {
	for ref := range h.held {
		h.release(ref)
	}
}

// lockChildren takes the child locks of refs for one pass of the writer's CRD, each wait
// observed in ork_child_lock_wait_seconds.
func (w *Writer) lockChildren(ctx context.Context, refs []Ref) (*heldLocks, error) {
	hist := w.LockWait.WithLabelValues(w.CRD)
	return w.Locks.lock(ctx, refs, childLockWait, func(d time.Duration) { hist.Observe(d.Seconds()) })
}
