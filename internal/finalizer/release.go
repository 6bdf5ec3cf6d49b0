package finalizer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/katalog"
)

// Released names a custom resource whose finalizer Release removed.
type Released struct {
	CRD       string `json:"crd"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Deleting is true when the custom resource was being deleted: it goes now, unless
	// another finalizer holds it.
	Deleting bool `json:"deleting"`
}

// Release removes ork's finalizer from every custom resource of every CRD of set, whatever
// reconcile.remote.finalize says: the way out before uninstalling ork, so that no custom
// resource is left undeletable. It goes on past a CRD it cannot list or a write that fails,
// and returns what it released, sorted, with every error joined.
func Release(ctx context.Context, dyn dynamic.Interface, set *katalog.Set, opts Options) ([]Released, error) {
	var out []Released
	var errs []error
	for _, crd := range set.CRDs {
		at := crd.APITypes
		if at == nil || at.Plural == "" {
			continue // validate says so; nothing to list
		}
		gvr := schema.GroupVersionResource{Group: at.Group, Version: at.Version, Resource: at.Plural}
		list, err := dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("crd %s: list %s: %w", crd.Name, gvr.GroupResource(), err))
			continue
		}
		for i := range list.Items {
			cr := &list.Items[i]
			if !Has(cr) {
				continue
			}
			got, err := Set(ctx, dyn.Resource(gvr).Namespace(cr.GetNamespace()), cr, false, opts)
			if err != nil {
				errs = append(errs, fmt.Errorf("crd %s: %s/%s: %w", crd.Name, cr.GetNamespace(), cr.GetName(), err))
				continue
			}
			if got != nil {
				out = append(out, Released{CRD: crd.Name, Namespace: cr.GetNamespace(), Name: cr.GetName(),
					Deleting: cr.GetDeletionTimestamp() != nil})
			}
		}
	}
	slices.SortFunc(out, func(a, b Released) int {
		return cmp.Or(cmp.Compare(a.CRD, b.CRD), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, errors.Join(errs...)
}
