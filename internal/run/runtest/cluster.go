package runtest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The kinds of the children the everyday answer (OKWithChildren) and most tests make.
var (
	Deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	Services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// CRs is the client of the fixture's custom resources (namespaced or not).
func (f *Fixture) CRs() dynamic.ResourceInterface {
	if f.Cluster {
		return f.Dyn.Resource(f.GVR)
	}
	return f.Dyn.Resource(f.GVR).Namespace(f.NS)
}

// CreateCR creates the App name with spec, and an annotation the default payload excludes.
func (f *Fixture) CreateCR(name string, spec map[string]any) *unstructured.Unstructured {
	f.T.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.Group + "/v1", "kind": "App",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{"note": "excluded"}},
		"spec":     spec,
	}}
	out, err := f.CRs().Create(f.T.Context(), u, metav1.CreateOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	return out
}

// PatchSpec merge-patches the CR, as kubectl patch does: no resourceVersion to race with
// ork's own status writes.
func (f *Fixture) PatchSpec(name, patch string) {
	f.T.Helper()
	if _, err := f.CRs().Patch(f.T.Context(), name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		f.T.Fatal(err)
	}
}

// GetCR reads the CR name, failing the test when it cannot.
func (f *Fixture) GetCR(name string) *unstructured.Unstructured {
	f.T.Helper()
	u, err := f.CRs().Get(f.T.Context(), name, metav1.GetOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	return u
}

// ReadyCondition returns the CR's Ready condition, or nil.
func ReadyCondition(u *unstructured.Unstructured) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return m
		}
	}
	return nil
}

// WaitReady waits until the CR's Ready condition has status want ("True"/"False") and
// returns the CR.
func (f *Fixture) WaitReady(name, want string) *unstructured.Unstructured {
	f.T.Helper()
	var cr *unstructured.Unstructured
	f.Eventually("Ready="+want+" on "+name, func() (bool, error) {
		u, err := f.CRs().Get(f.T.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cr = u
		c := ReadyCondition(u)
		return c != nil && c["status"] == want, nil
	})
	return cr
}

// Get reads the object name of gvr in the fixture's namespace.
func (f *Fixture) Get(gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	return f.Dyn.Resource(gvr).Namespace(f.NS).Get(f.T.Context(), name, metav1.GetOptions{})
}

// MustNotExist fails the test unless the object name of gvr is absent.
func (f *Fixture) MustNotExist(gvr schema.GroupVersionResource, name string) {
	f.T.Helper()
	if _, err := f.Get(gvr, name); !apierrors.IsNotFound(err) {
		f.T.Fatalf("%s %s exists (err %v), want it absent", gvr.Resource, name, err)
	}
}

// Events lists the Events recorded for the object name in the fixture's namespace.
func (f *Fixture) Events(name string) []corev1.Event {
	f.T.Helper()
	list, err := f.Env.Clientset.CoreV1().Events(f.NS).List(f.T.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name,
	})
	if err != nil {
		f.T.Fatal(err)
	}
	return list.Items
}

// WaitEvent waits for an Event of eventType and reason on the object name and returns it.
func (f *Fixture) WaitEvent(name, eventType, reason string) corev1.Event {
	f.T.Helper()
	var found corev1.Event
	f.Eventually(fmt.Sprintf("%s Event %s on %s", eventType, reason, name), func() (bool, error) {
		for _, ev := range f.Events(name) {
			if ev.Type == eventType && ev.Reason == reason {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// ObjectOf is a bare custom resource with an empty spec.
func ObjectOf(apiVersion, kind, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}, "spec": map[string]any{},
	}}
}
