package run

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/run/opcallback"
)

// callbackSecretKey is the key of the callback Secret that holds the HMAC key.
const callbackSecretKey = "key"

// checkCallbackOptions refuses a half-configured completion callback: a URL without a
// listener (or a key) would send reconcilers somewhere nothing answers.
func checkCallbackOptions(o Options) error {
	set := []bool{o.OperationCallbackURL != "", o.OperationCallbackAddr != "", o.OperationCallbackSecret != ""}
	if !set[0] && !set[1] && !set[2] {
		return nil
	}
	if !set[0] || !set[1] || !set[2] {
		return errors.New("operation callback: set the URL, the listen address and the Secret together (--operation-callback-url, --operation-callback-addr, --operation-callback-secret)")
	}
	if errs := validation.IsDNS1123Subdomain(o.OperationCallbackSecret); len(errs) > 0 {
		return fmt.Errorf("operation callback Secret %q: %s", o.OperationCallbackSecret, strings.Join(errs, "; "))
	}
	u, err := url.Parse(o.OperationCallbackURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("operation callback URL %q: want an absolute http or https URL without query or fragment", o.OperationCallbackURL)
	}
	return nil
}

// callbackKey reads the HMAC key of the callback tokens through the Secret cache: a
// rotated key is used within the cache's TTL (tokens already sent then fail, and the
// operation is polled as usual).
func (e *Engine) callbackKey(ctx context.Context) ([]byte, error) {
	k, err := e.secrets.SecretValue(ctx, e.opts.Namespace, e.opts.OperationCallbackSecret, callbackSecretKey)
	if err != nil {
		return nil, fmt.Errorf("operation callback key: %w", err)
	}
	if len(k) < 16 {
		return nil, fmt.Errorf("operation callback key: secret %s/%s key %q has %d bytes, want at least 16", e.opts.Namespace, e.opts.OperationCallbackSecret, callbackSecretKey, len(k))
	}
	return k, nil
}

// callbackFunc is passEnv.callback: nil unless ork serves callbacks (a dry run serves none:
// it holds no operation to wake).
func (e *Engine) callbackFunc() func(ctx context.Context, uid types.UID, generation int64, id string) *operation.Callback {
	if e.opts.OperationCallbackURL == "" || e.dry != nil {
		return nil
	}
	base := strings.TrimSuffix(e.opts.OperationCallbackURL, "/") + "/operations/"
	return func(ctx context.Context, uid types.UID, generation int64, id string) *operation.Callback {
		key, err := e.callbackKey(ctx)
		if err != nil {
			// The call goes on without one: the operation is polled as usual.
			e.log.Warn("no operation callback sent", "err", err)
			return nil
		}
		token := opcallback.Token(key, uid, generation, id)
		return &operation.Callback{URL: base + token, Token: token}
	}
}

// callbackDeps are the callback handler's view of the engine: the controllers running now
// (none on a standby, which then owns nothing and answers 503), the gate, the Secret cache.
func (e *Engine) callbackDeps() opcallback.Deps {
	return opcallback.Deps{
		Key: e.callbackKey,
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
