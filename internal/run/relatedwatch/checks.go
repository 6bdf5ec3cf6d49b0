package relatedwatch

import (
	"context"
	"sync"
)

// Checkers is how many digest reads (statusOnly) run at once for one CRD. They are
// GETs served from the apiserver's watch cache, sharing the engine's client-go rate limiter
// with the passes: more than one, so that a slow read (up to digestRead) does not hold every
// other object's; a few, so that a burst of status changes (a rollout's Pods) cannot take
// the limiter's places from the passes.
const Checkers = 4

// statusChecks are the digest reads changed hands over, by object: at most one waiting (a
// later change of the object replaces it: read at the newest version, its digest is compared
// with the last one remembered, so no change in between is missed) and one running, so that
// one object's digests are still compared in order. add never waits, and what waits is
// bounded by the number of objects, not of changes.
type statusChecks struct {
	mu      sync.Mutex
	waiting map[string]statusCheck
	// order holds the waiting objects no worker is reading, oldest first; an object read
	// while a change of it waits goes back at the end when its read is done.
	order   []string
	running map[string]bool
	// ready holds a token while a worker may find a check to take: each taker passes it on
	// while more remain, so that no check waits while a worker idles.
	ready chan struct{}
}

func newStatusChecks() *statusChecks {
	return &statusChecks{waiting: map[string]statusCheck{}, running: map[string]bool{}, ready: make(chan struct{}, 1)}
}

// add queues ck, in place of a check of the same object still waiting.
func (q *statusChecks) add(ck statusCheck) {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, had := q.waiting[ck.key]
	q.waiting[ck.key] = ck
	if !had && !q.running[ck.key] {
		q.order = append(q.order, ck.key)
		q.wake()
	}
}

// take hands out the oldest check whose object no worker is reading; done must follow.
func (q *statusChecks) take() (statusCheck, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return statusCheck{}, false
	}
	key := q.order[0]
	q.order = q.order[1:]
	if len(q.order) == 0 {
		q.order = nil // let a burst's backing array go
	} else {
		q.wake()
	}
	ck := q.waiting[key]
	delete(q.waiting, key)
	if len(q.waiting) == 0 {
		q.waiting = map[string]statusCheck{} // a map keeps its buckets after deletes
	}
	q.running[key] = true
	return ck, true
}

// done ends the read of key's object: a change of it that came meanwhile may be taken.
func (q *statusChecks) done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.running, key)
	if _, waits := q.waiting[key]; waits {
		q.order = append(q.order, key)
		q.wake()
	}
}

func (q *statusChecks) wake() {
	select {
	case q.ready <- struct{}{}:
	default: // a token is there already
	}
}

// runChecks runs Checkers workers over w.checks until stop, and returns when all
// have: a check in flight is cancelled with the context.
func (w *Watch) runChecks(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	var wg sync.WaitGroup
	for range Checkers {
		wg.Go(func() { w.checkWorker(ctx) })
	}
	wg.Wait()
}

func (w *Watch) checkWorker(ctx context.Context) {
	for ctx.Err() == nil {
		ck, ok := w.checks.take()
		if !ok {
			select {
			case <-ctx.Done():
			case <-w.checks.ready:
			}
			continue
		}
		w.finishCheck(ctx, ck)
		w.checks.done(ck.key)
	}
}
