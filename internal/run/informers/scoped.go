// Package informers holds the engine's scoped informer: one informer over every namespace,
// or one per watched namespace under --watch-namespace, read as one. It is a leaf: it knows
// nothing of the engine (docs/architecture.md).
package informers

import (
	"errors"
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// Scoped reads as one informer over the objects of one type that ork watches: a
// single informer for every namespace (the default, and always for a cluster-scoped type),
// or one per watched namespace under --watch-namespace, whose Roles do not let ork list
// across namespaces.
type Scoped struct {
	// namespaces are the watched namespaces, parallel to informers; nil for one informer
	// over every namespace.
	namespaces []string
	informers  []cache.SharedIndexInformer
}

// AllNamespaces is one informer over every namespace.
func AllNamespaces(inf cache.SharedIndexInformer) Scoped {
	return Scoped{informers: []cache.SharedIndexInformer{inf}}
}

// PerNamespace builds one informer per namespace with build.
func PerNamespace(namespaces []string, build func(namespace string) cache.SharedIndexInformer) Scoped {
	s := Scoped{namespaces: namespaces}
	for _, ns := range namespaces {
		s.informers = append(s.informers, build(ns))
	}
	return s
}

// GetIndexer reads the caches; the name keeps the call sites of a single informer.
func (s Scoped) GetIndexer() Indexer { return Indexer(s) }

// HasSynced reports whether every informer has synced.
func (s Scoped) HasSynced() bool {
	for _, inf := range s.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// AddEventHandler adds h to every informer.
func (s Scoped) AddEventHandler(h cache.ResourceEventHandler) ([]cache.ResourceEventHandlerRegistration, error) {
	var regs []cache.ResourceEventHandlerRegistration
	for _, inf := range s.informers {
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return regs, err
		}
		regs = append(regs, reg)
	}
	return regs, nil
}

// SetTransform sets f on every informer.
func (s Scoped) SetTransform(f cache.TransformFunc) error {
	var errs []error
	for _, inf := range s.informers {
		errs = append(errs, inf.SetTransform(f))
	}
	return errors.Join(errs...)
}

// AddIndexers adds indexers to every informer.
func (s Scoped) AddIndexers(indexers cache.Indexers) error {
	var errs []error
	for _, inf := range s.informers {
		errs = append(errs, inf.AddIndexers(indexers))
	}
	return errors.Join(errs...)
}

// Run runs every informer until stop closes, and returns when all have returned.
func (s Scoped) Run(stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, inf := range s.informers {
		wg.Go(func() { inf.Run(stop) })
	}
	wg.Wait()
}

// LastSyncRV is the resourceVersion the cache of namespace last listed or watched; "" when
// that namespace is not watched or nothing was listed yet.
func (s Scoped) LastSyncRV(namespace string) string {
	if s.namespaces == nil {
		if len(s.informers) == 0 {
			return ""
		}
		return s.informers[0].LastSyncResourceVersion()
	}
	if i := slices.Index(s.namespaces, namespace); i >= 0 {
		return s.informers[i].LastSyncResourceVersion()
	}
	return ""
}

// Indexer reads the caches of a Scoped as one.
type Indexer Scoped

// GetByKey finds a "namespace/name" key in its namespace's cache; an object in a namespace
// ork does not watch is never cached.
func (s Indexer) GetByKey(key string) (any, bool, error) {
	if s.namespaces == nil {
		return s.informers[0].GetIndexer().GetByKey(key)
	}
	ns, _, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false, err
	}
	i := slices.Index(s.namespaces, ns)
	if i < 0 {
		return nil, false, nil
	}
	return s.informers[i].GetIndexer().GetByKey(key)
}

// ByIndex lists the objects of every cache whose index name has value.
func (s Indexer) ByIndex(name, value string) ([]any, error) {
	var out []any
	for _, inf := range s.informers {
		objs, err := inf.GetIndexer().ByIndex(name, value)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ListKeys lists the keys of every cache.
func (s Indexer) ListKeys() []string {
	var out []string
	for _, inf := range s.informers {
		out = append(out, inf.GetIndexer().ListKeys()...)
	}
	return out
}

// List is every object of every cache.
func (s Indexer) List() []any {
	var out []any
	for _, inf := range s.informers {
		out = append(out, inf.GetIndexer().List()...)
	}
	return out
}

// FromInformers is the informers given, one per namespace (namespaces parallel to them), or
// one over every namespace when namespaces is nil.
func FromInformers(namespaces []string, infs []cache.SharedIndexInformer) Scoped {
	return Scoped{namespaces: namespaces, informers: infs}
}

// Namespaces are the watched namespaces, parallel to Informers; nil for one informer over
// every namespace.
func (s Scoped) Namespaces() []string { return s.namespaces }

// Informers are the informers behind s.
func (s Scoped) Informers() []cache.SharedIndexInformer { return s.informers }
