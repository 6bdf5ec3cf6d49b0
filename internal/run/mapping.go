package run

import (
	"fmt"

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

// kindFor asks discovery for the kind served at gvr, refreshing once for types installed
// after ork started (a CRD applied a moment ago).
func (e *Engine) kindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	gvk, err := e.mapper.KindFor(gvr)
	if err != nil && meta.IsNoMatchError(err) {
		e.mapper.Reset()
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
func (e *Engine) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		e.mapper.Reset()
		m, err = e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}
