package run

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/run/opcallback"
)

// callbackKey reads the HMAC key of the callback tokens (opcallback.KeyReader).
func (e *Engine) callbackKey() func(context.Context) ([]byte, error) {
	return opcallback.KeyReader(e.secrets.SecretValue, e.opts.Namespace, e.opts.OperationCallbackSecret)
}

// callbackFunc is passEnv.callback: nil unless ork serves callbacks (a dry run serves none:
// it holds no operation to wake).
func (e *Engine) callbackFunc() func(ctx context.Context, uid types.UID, generation int64, id string) *operation.Callback {
	if e.opts.OperationCallbackURL == "" || e.dry != nil {
		return nil
	}
	return opcallback.Sender(e.opts.OperationCallbackURL, e.callbackKey(), e.log)
}

// callbackDeps are the callback handler's view of the engine: the controllers running now
// (none on a standby, which then owns nothing and answers 503), the gate, the Secret cache.
func (e *Engine) callbackDeps() opcallback.Deps {
	return opcallback.Deps{
		Key: e.callbackKey(),
		Owns: func(uid types.UID) bool {
			return e.passing.Load() != nil && e.gate.owns(uid)
		},
		Find: func(namespace, name string, uid types.UID) (opcallback.Held, bool) {
			var found *opcallback.Held
			for _, c := range e.running() {
				h, ok := c.heldFor(objectKey(namespace, name), uid)
				if ok && h.UID == uid {
					return h, true
				}
				if ok {
					found = &h
				}
			}
			if found != nil {
				return *found, true // another object of that name: refused
			}
			return opcallback.Held{}, false
		},
		Wake: func(namespace, name string, uid types.UID) error {
			for _, c := range e.running() {
				if cr := c.cached(objectKey(namespace, name)); cr != nil && cr.GetUID() == uid {
					c.add(objectKey(namespace, name), addOpts{trigger: TriggerRequeue, lane: laneFast})
					return nil
				}
			}
			return fmt.Errorf("%s/%s left the cache", namespace, name)
		},
		Count: func(result string) { e.opts.Metrics.OperationCallbacks.WithLabelValues(result).Inc() },
		Log:   e.log,
	}
}

// running are the controllers running now; none on a standby or between leaderships.
func (e *Engine) running() []*controller {
	if cs := e.passing.Load(); cs != nil {
		return *cs
	}
	return nil
}

// objectKey is the cache key of namespace/name ("name" for a cluster-scoped object).
func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// heldFor is the operation c's cached CR key holds, for the callback's check; ok is false
// when c's cache has no such object. This replica's own record of the operation wins over
// the cache: it may have persisted the operation a moment before the cache shows it. Once
// the operation ended the record is gone, and the cache, a moment later, shows none either.
func (c *controller) heldFor(key string, uid types.UID) (opcallback.Held, bool) {
	cr := c.cached(key)
	if cr == nil {
		return opcallback.Held{}, false
	}
	h := opcallback.Held{UID: cr.GetUID()}
	if h.UID != uid {
		return h, true
	}
	if op, ok := c.ops.Get(key); ok && op.UID == uid {
		h.ID, h.Generation = op.ID, op.Generation
		return h, true
	}
	from := cr.Object
	if c.operationPlace() == operation.InAnnotation {
		from = map[string]any{"metadata": cr.Object["metadata"]} // as heldOperation reads it
	}
	if s, _, err := operation.Read(from); err == nil && s.Held() {
		h.ID, h.Generation = s.ID, s.Generation
	}
	return h, true
}
