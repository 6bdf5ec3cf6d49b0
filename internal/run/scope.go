package run

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// scopedInformer reads as one informer over the objects of one type that ork watches: a
// single informer for every namespace (the default, and always for a cluster-scoped type),
// or one per watched namespace under --watch-namespace, whose Roles do not let ork list
// across namespaces.
type scopedInformer struct {
	// namespaces are the watched namespaces, parallel to informers; nil for one informer
	// over every namespace.
	namespaces []string
	informers  []cache.SharedIndexInformer
}

// allNamespaces is one informer over every namespace.
func allNamespaces(inf cache.SharedIndexInformer) scopedInformer {
	return scopedInformer{informers: []cache.SharedIndexInformer{inf}}
}

// perNamespace builds one informer per namespace with build.
func perNamespace(namespaces []string, build func(namespace string) cache.SharedIndexInformer) scopedInformer {
	s := scopedInformer{namespaces: namespaces}
	for _, ns := range namespaces {
		s.informers = append(s.informers, build(ns))
	}
	return s
}

// GetIndexer reads the caches; the name keeps the call sites of a single informer.
func (s scopedInformer) GetIndexer() scopedIndexer { return scopedIndexer(s) }

// HasSynced reports whether every informer has synced.
func (s scopedInformer) HasSynced() bool {
	for _, inf := range s.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// AddEventHandler adds h to every informer.
func (s scopedInformer) AddEventHandler(h cache.ResourceEventHandler) ([]cache.ResourceEventHandlerRegistration, error) {
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
func (s scopedInformer) SetTransform(f cache.TransformFunc) error {
	var errs []error
	for _, inf := range s.informers {
		errs = append(errs, inf.SetTransform(f))
	}
	return errors.Join(errs...)
}

// AddIndexers adds indexers to every informer.
func (s scopedInformer) AddIndexers(indexers cache.Indexers) error {
	var errs []error
	for _, inf := range s.informers {
		errs = append(errs, inf.AddIndexers(indexers))
	}
	return errors.Join(errs...)
}

// Run runs every informer until stop closes, and returns when all have returned.
func (s scopedInformer) Run(stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, inf := range s.informers {
		wg.Go(func() { inf.Run(stop) })
	}
	wg.Wait()
}

// lastSyncRV is the resourceVersion the cache of namespace last listed or watched; "" when
// that namespace is not watched or nothing was listed yet.
func (s scopedInformer) lastSyncRV(namespace string) string {
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

// scopedIndexer reads the caches of a scopedInformer as one.
type scopedIndexer scopedInformer

// GetByKey finds a "namespace/name" key in its namespace's cache; an object in a namespace
// ork does not watch is never cached.
func (s scopedIndexer) GetByKey(key string) (any, bool, error) {
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
func (s scopedIndexer) ByIndex(name, value string) ([]any, error) {
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
func (s scopedIndexer) ListKeys() []string {
	var out []string
	for _, inf := range s.informers {
		out = append(out, inf.GetIndexer().ListKeys()...)
	}
	return out
}

// watchScope builds the informers on a custom resource type: one over every namespace, or
// one per watched namespace. A cluster-scoped type cannot be watched by namespace: an error.
func (e *Engine) watchScope(gvr schema.GroupVersionResource, build func(namespace string) cache.SharedIndexInformer) (scopedInformer, error) {
	if len(e.opts.WatchNamespaces) == 0 {
		return allNamespaces(build(metav1.NamespaceAll)), nil
	}
	namespaced, err := e.namespaced(gvr)
	if err != nil {
		return scopedInformer{}, err
	}
	if !namespaced {
		return scopedInformer{}, fmt.Errorf("%s is cluster-scoped: its custom resources are in no namespace, so --watch-namespace cannot limit ork to them (run it in an ork without --watch-namespace)",
			gvr.GroupResource())
	}
	return perNamespace(e.opts.WatchNamespaces, build), nil
}

// namespaced asks discovery whether gvr is namespaced.
func (e *Engine) namespaced(gvr schema.GroupVersionResource) (bool, error) {
	gvk, err := e.kindFor(gvr)
	if err != nil {
		return false, fmt.Errorf("not served by the cluster: %w", err)
	}
	m, err := e.mapping(gvk)
	if err != nil {
		return false, fmt.Errorf("not served by the cluster: %w", err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// watches reports whether ork watches namespace.
func (e *Engine) watches(namespace string) bool {
	return len(e.opts.WatchNamespaces) == 0 || slices.Contains(e.opts.WatchNamespaces, namespace)
}

// List is every object of every cache.
func (s scopedIndexer) List() []any {
	var out []any
	for _, inf := range s.informers {
		out = append(out, inf.GetIndexer().List()...)
	}
	return out
}
