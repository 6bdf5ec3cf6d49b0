package run

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
)

var crdGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// installCRDs server-side applies every crdFile and waits until each is Established.
func (e *Engine) installCRDs(ctx context.Context) error {
	for _, c := range e.set.CRDs {
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
		done := e.step("installing CRD %s and waiting until it is Established", m.Name)
		_, err = e.dyn.Resource(crdGVR).Apply(ctx, m.Name, u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err != nil {
			err = fmt.Errorf("install crd %s: %w", m.Name, err)
		} else {
			err = e.waitEstablished(ctx, m.Name)
		}
		done(err)
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) waitEstablished(ctx context.Context, name string) error {
	// Establishing takes well under a second on a healthy apiserver; a minute means trouble.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := e.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
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
				e.api.Reset()
				err := e.api.KindServed(schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind})
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
