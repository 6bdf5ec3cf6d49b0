// Package apitypes is what ork knows of the types the cluster serves: discovery and the
// REST mapper, the mappings found, and a rate-limited refresh for types installed after the
// start (a CRD applied a moment ago).
package apitypes

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/orkspace/ork/internal/katalog"
)

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

// Types is what ork knows of the types the cluster serves: discovery and the REST mapper,
// with the mappings found and a rate-limited refresh for types installed after the start.
type Types struct {
	discovery discovery.DiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	// mappings are the mapper's answers by kind, until it is reset.
	mappings   sync.Map
	mappingGen atomic.Uint64
	// resetLimit rate-limits refreshes of the discovery cache.
	resetLimit resetLimiter
}

// New asks d, and refreshes what it told at most once per every.
func New(d discovery.DiscoveryInterface, every time.Duration) *Types {
	return &Types{discovery: d, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(d)),
		resetLimit: resetLimiter{every: every}}
}

// refresh resets the discovery cache for a kind it does not know (a CRD applied a
// moment ago), when the rate limit allows; false when it did not.
func (a *Types) refresh() bool {
	if !a.resetLimit.allow(time.Now()) {
		return false
	}
	a.Reset()
	return true
}

// Reset drops what discovery told, and the mappings taken from it.
func (a *Types) Reset() {
	a.mapper.Reset()
	a.mappingGen.Add(1) // a lookup that began before the reset must not store its answer
	a.mappings.Clear()
}

// KindFor asks discovery for the kind served at gvr, refreshing once for types installed
// after ork started (a CRD applied a moment ago).
func (a *Types) KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	gvk, err := a.mapper.KindFor(gvr)
	if err != nil && meta.IsNoMatchError(err) && a.refresh() {
		gvk, err = a.mapper.KindFor(gvr)
	}
	return gvk, err
}

// Resolve fills in the preferred version of a group/resource when none is declared.
func (a *Types) Resolve(gvr schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	gvk, err := a.KindFor(gvr)
	if err != nil {
		return gvr, fmt.Errorf("not served by the cluster: %w", err)
	}
	gvr.Version = gvk.Version
	return gvr, nil
}

// Mapping returns the REST mapping for a kind, refreshing discovery once on a miss.
// Found mappings are kept until discovery is reset: the mapper answers each from a scan of
// every served group (a few percent of ork's CPU at one lookup per child per pass), and
// its answer changes only with a reset.
func (a *Types) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m, ok := a.mappings.Load(gvk); ok {
		return m.(*meta.RESTMapping), nil
	}
	gen := a.mappingGen.Load()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) && a.refresh() {
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err == nil && a.mappingGen.Load() == gen {
		a.mappings.Store(gvk, m)
	}
	return m, err
}

// KindServed is nil when discovery, as last told, maps the kind in any version: no refresh
// and nothing kept, for a poll that resets on its own while a new CRD gets listed.
func (a *Types) KindServed(gk schema.GroupKind) error {
	_, err := a.mapper.RESTMapping(gk)
	return err
}

// ServesStatus asks discovery whether the custom resource has the status subresource.
func (a *Types) ServesStatus(gvr schema.GroupVersionResource) (bool, error) {
	list, err := a.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("discover %s: %w", gvr.GroupVersion(), err)
	}
	if list == nil {
		return true, nil // not listed yet: assume the usual, a write failure will say more
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource+"/status" {
			return true, nil
		}
	}
	return false, nil
}

// Namespaced asks discovery whether gvr is namespaced.
func (a *Types) Namespaced(gvr schema.GroupVersionResource) (bool, error) {
	gvk, err := a.KindFor(gvr)
	if err != nil {
		return false, fmt.Errorf("not served by the cluster: %w", err)
	}
	m, err := a.Mapping(gvk)
	if err != nil {
		return false, fmt.Errorf("not served by the cluster: %w", err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// RelatedGVR is the resource of a related entry: its kind through the REST mapper, or its
// plural through discovery, in the entry's version or the preferred one.
func (a *Types) RelatedGVR(r katalog.Related) (schema.GroupVersionResource, error) {
	if r.Kind != "" {
		m, err := a.Mapping(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind})
		if err != nil {
			return schema.GroupVersionResource{}, fmt.Errorf("%s %s is not served by the cluster: %w", r.Group, r.Kind, err)
		}
		return m.Resource, nil
	}
	return a.Resolve(schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Plural})
}
