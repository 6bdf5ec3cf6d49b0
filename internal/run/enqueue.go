package run

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/orkspace/ork/internal/run/crdqueue"
)

// workQueue is a CRD's work queue as its controller holds it: client-go's rate-limiting
// queue (watched by the liveness check) and the lanes (run/crdqueue) that decide which ready
// key goes next, one handle; the lanes are nil in unit tests' plain queues.
type workQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	lanes *crdqueue.Queue
}

// laneChoice says which lane of the queue an add puts its key in (run/crdqueue).
type laneChoice int

const (
	// laneAsIs leaves the key in whatever lane it is in.
	laneAsIs laneChoice = iota
	// laneFast: a real change (an event of the CR, a child, a related object).
	laneFast
	// laneKeep: a retry or a wait, in the lane of the pass that queued it.
	laneKeep
)

// addOpts is how a key is queued. The zero value queues it now, noting nothing.
type addOpts struct {
	// trigger is noted in the ledger before the add, so that the pass it starts knows why
	// it runs; empty notes nothing (a pass already owed covers the add).
	trigger Trigger
	// uid is the object whose own event this is: its return retires its tombstone
	// (keyledger.Ledger.NoteObject).
	uid types.UID
	// lane is the lane the key goes into.
	lane laneChoice
	// minInterval: no sooner than this after the key's last pass (ChildMinInterval for the
	// change of a child or a related object). Only with a trigger, whose note says when
	// that pass was.
	minInterval time.Duration
	// after: no sooner than this from now.
	after time.Duration
	// rateLimited: after the key's backoff (the per-key rate limiter).
	rateLimited bool
}

// add queues key as o says, always in the same order of effects: the trigger into the
// ledger, then the lane, then the queue. Every add of a controller goes through it; two
// places note a trigger without an add of their own, in the same order: a pass that waits
// for its bucket to be ready (its add comes at the wake) and a finalize deadline passed
// after a failure (its backoff's add comes with the schedule).
func (c *controller) add(key string, o addOpts) {
	var last time.Time
	if o.trigger != "" {
		last = c.ledger.NoteObject(key, o.trigger, o.uid)
	}
	switch o.lane {
	case laneAsIs:
	case laneFast:
		c.queue.lanes.MarkFast(key)
	case laneKeep:
		c.queue.lanes.KeepLane(key)
	}
	after := o.after
	if o.minInterval > 0 && !last.IsZero() {
		after = max(after, o.minInterval-time.Since(last))
	}
	switch {
	case o.rateLimited:
		c.queue.AddRateLimited(key)
	case after > 0:
		c.queue.AddAfter(key, after)
	default:
		c.queue.Add(key)
	}
}
