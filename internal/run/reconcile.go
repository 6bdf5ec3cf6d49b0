package run

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/resources"
)

// reconciler decides what one custom resource should look like: the remote or the
// declarative reconciler.
type reconciler interface {
	reconcile(ctx context.Context, c *controller, in input) decision
}

// input is one reconcile's view of the custom resource.
type input struct {
	key      string
	cr       *unstructured.Unstructured // the cached object: never mutated
	trigger  Trigger
	attempt  int
	deleting bool
	// gone is true when cr is the last state of a deleted object: nothing to write status to.
	gone bool
}

// action is what the queue does with a key after a reconcile.
type action int

const (
	actionDone action = iota
	actionRequeueAfter
	actionBackoff
	actionRetryAfter
)

// decision is a reconciler's answer; the engine applies it.
type decision struct {
	success bool
	// status is merged into the CR's status on success.
	status map[string]any
	// apply are applied every pass; createIfMissing only when the child does not exist.
	apply, createIfMissing []resources.Object
	// remove are deleted (declarative onDelete while the CR is being deleted).
	remove  []resources.Object
	action  action
	after   time.Duration
	reason  string
	message string
}

func failure(reason, format string, a ...any) decision {
	return decision{action: actionBackoff, reason: reason, message: fmt.Sprintf(format, a...)}
}

// processNext handles one key; false means the queue is shutting down.
func (c *controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if c.stopping.Load() {
		return false
	}
	c.handle(ctx, key)
	return true
}

func (c *controller) handle(ctx context.Context, key string) {
	start := time.Now()
	trigger := c.triggers.take(key)
	in, found := c.lookup(key, trigger)
	if !found {
		c.queue.Forget(key)
		return
	}
	d := c.safeReconcile(ctx, in)
	if d.success && !in.deleting {
		if err := c.applyAll(ctx, in.cr, d); err != nil {
			d = failure(reasonApplyFailed, "%v", err)
		}
	}
	// A CR being deleted but still there (another controller's finalizer holds it) gets its
	// failures reported like any other: it is where users look.
	if !in.gone && (!in.deleting || !d.success) {
		c.report(ctx, in.cr, d)
	}
	if d.success && in.deleting {
		c.triggers.forgetTombstone(key)
	}

	result := "success"
	switch {
	case !d.success:
		result = "error"
	case d.action == actionRequeueAfter:
		result = "requeue"
	}
	c.e.opts.Metrics.ReconcileTotal.WithLabelValues(c.crd.Name, result).Inc()
	c.e.opts.Metrics.ReconcileDuration.WithLabelValues(c.crd.Name).Observe(time.Since(start).Seconds())
	logArgs := []any{"key", key, "trigger", string(in.trigger), "attempt", in.attempt,
		"result", result, "duration", time.Since(start).Round(time.Millisecond).String()}
	if d.success {
		c.log.Debug("reconciled", logArgs...)
	} else {
		c.log.Warn("reconcile failed", append(logArgs, "reason", d.reason, "error", d.message)...)
	}

	switch d.action {
	case actionDone:
		c.queue.Forget(key)
	case actionRequeueAfter:
		// "requeue" without a delay goes through the per-key backoff so that a reconciler
		// that always asks again slows down instead of spinning.
		if d.after > 0 {
			c.queue.Forget(key)
			c.queue.AddAfter(key, d.after)
		} else {
			c.queue.AddRateLimited(key)
		}
	case actionRetryAfter:
		// The endpoint picks the pause, but never longer than ork's own backoff ceiling.
		c.queue.AddAfter(key, min(d.after, c.e.opts.BackoffMax))
	case actionBackoff:
		c.queue.AddRateLimited(key)
	}
}

// lookup finds the object for key: the cached one, or the last state of a deleted one.
func (c *controller) lookup(key string, trigger Trigger) (input, bool) {
	in := input{key: key, trigger: trigger, attempt: c.queue.NumRequeues(key) + 1}
	obj, exists, err := c.informer.GetIndexer().GetByKey(key)
	if err == nil && exists {
		in.cr = obj.(*unstructured.Unstructured)
		in.deleting = in.cr.GetDeletionTimestamp() != nil
		if in.trigger == TriggerDelete && !in.deleting {
			// Deleted and created again before the key was processed: this is the new object.
			in.trigger = TriggerCreate
		}
		return in, true
	}
	if tomb := c.triggers.tombstone(key); tomb != nil {
		in.cr, in.deleting, in.gone = tomb, true, true
		return in, true
	}
	return in, false
}

// safeReconcile turns a panic in a reconciler into a failed reconcile.
func (c *controller) safeReconcile(ctx context.Context, in input) (d decision) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Warn("reconcile panicked", "key", in.key, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			d = failure(reasonPanic, "reconcile panicked: %v", r)
		}
	}()
	return c.rec.reconcile(ctx, c, in)
}

// childrenOf returns the cached children of the CR, by type key and name, as plain maps
// (the cache's own maps: callers copy before changing them).
func (c *controller) childrenOf(cr *unstructured.Unstructured) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for _, ch := range c.children {
		objs, err := ch.informer.GetIndexer().ByIndex(ownerIndex, string(cr.GetUID()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			if out[ch.typeKey] == nil {
				out[ch.typeKey] = map[string]map[string]any{}
			}
			out[ch.typeKey][u.GetName()] = u.Object
		}
	}
	return out
}

// childExists reports whether the cache holds the object (for onCreate semantics).
func (c *controller) childExists(gr schema.GroupResource, namespace, name string) bool {
	for _, ch := range c.children {
		if ch.gvr.GroupResource() != gr {
			continue
		}
		key := name
		if namespace != "" {
			key = namespace + "/" + name
		}
		_, exists, err := ch.informer.GetIndexer().GetByKey(key)
		return err == nil && exists
	}
	return false
}
