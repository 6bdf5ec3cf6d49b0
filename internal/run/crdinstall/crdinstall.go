// Package crdinstall installs a Katalog's crdFiles for `ork run --install-crds`: a
// server-side apply of each, then a wait until it is Established and discovery serves it.
package crdinstall

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/apitypes"
)

var crdGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// Deps is what the install uses of the engine.
type Deps struct {
	Dyn dynamic.Interface
	// API is the engine's view of the served types, read again once a CRD is Established.
	API *apitypes.Types
	// Step reports a long step (the engine's progress); its func ends it with its error.
	Step func(format string, a ...any) func(error)
}

// Install server-side applies every crdFile of crds and waits until each is Established.
func Install(ctx context.Context, crds []*katalog.CRD, d Deps) error {
	for _, c := range crds {
		if c.Manifest == nil {
			continue
		}
		m := c.Manifest.DeepCopy()
		m.APIVersion, m.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
		if err != nil {
			return fmt.Errorf("crd %s: convert: %w", c.Name, err)
		}
		u := &unstructured.Unstructured{Object: raw}
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		done := d.Step("installing CRD %s and waiting until it is Established", m.Name)
		_, err = d.Dyn.Resource(crdGVR).Apply(ctx, m.Name, u, metav1.ApplyOptions{FieldManager: naming.FieldManager, Force: true})
		if err != nil {
			err = fmt.Errorf("install crd %s: %w", m.Name, err)
		} else {
			err = waitEstablished(ctx, d, m.Name)
		}
		done(err)
		if err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, d Deps, name string) error {
	// Establishing takes well under a second on a healthy apiserver; a minute means trouble.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := d.Dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				// Discovery lists a CRD a moment after it is Established; until then the
				// informers could not map it.
				d.API.Reset()
				err := d.API.KindServed(schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind})
				if meta.IsNoMatchError(err) {
					return false, nil // not in discovery yet
				}
				return err == nil, err
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("crd %s not Established: %w", name, err)
	}
	return nil
}
