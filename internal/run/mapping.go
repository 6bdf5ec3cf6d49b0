package run

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// managedType is a resource type a reconciler may create, with its children-payload key.
type managedType struct {
	schema.GroupVersionResource
	// typeKey names the type in prepared.children: the intent type ("deployment") for
	// built-ins, "<plural>.<group>" otherwise.
	typeKey string
}

// resetLimiter lets the discovery cache be refreshed at most once per interval. A refresh
// re-reads every API group and holds the mapper's lock meanwhile: a reconciler returning a
// mistyped kind on every call must not refresh it on every reconcile and serialise every
// worker of every CRD behind it.
type resetLimiter struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
}

func (l *resetLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		return false
	}
	l.last = now
	return true
}

// refreshDiscovery resets the discovery cache for a kind it does not know (a CRD applied a
// moment ago), when the rate limit allows; false when it did not.
func (e *Engine) refreshDiscovery() bool {
	if !e.discoveryReset.allow(time.Now()) {
		return false
	}
	e.resetMapper()
	return true
}

// resetMapper drops what discovery told, and the mappings taken from it.
func (e *Engine) resetMapper() {
	e.mapper.Reset()
	e.mappingGen.Add(1) // a lookup that began before the reset must not store its answer
	e.mappings.Clear()
}

// kindFor asks discovery for the kind served at gvr, refreshing once for types installed
// after ork started (a CRD applied a moment ago).
func (e *Engine) kindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	gvk, err := e.mapper.KindFor(gvr)
	if err != nil && meta.IsNoMatchError(err) && e.refreshDiscovery() {
		gvk, err = e.mapper.KindFor(gvr)
	}
	return gvk, err
}

// resolve fills in the preferred version of a group/resource when none is declared.
func (e *Engine) resolve(gvr schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	gvk, err := e.kindFor(gvr)
	if err != nil {
		return gvr, fmt.Errorf("not served by the cluster: %w", err)
	}
	gvr.Version = gvk.Version
	return gvr, nil
}

// mapping returns the REST mapping for a kind, refreshing discovery once on a miss.
// Found mappings are kept until discovery is reset: the mapper answers each from a scan of
// every served group (a few percent of ork's CPU at one lookup per child per pass), and
// its answer changes only with a reset.
func (e *Engine) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m, ok := e.mappings.Load(gvk); ok {
		return m.(*meta.RESTMapping), nil
	}
	gen := e.mappingGen.Load()
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) && e.refreshDiscovery() {
		m, err = e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err == nil && e.mappingGen.Load() == gen {
		e.mappings.Store(gvk, m)
	}
	return m, err
}
