package main

import (
	"context"

	"github.com/orkspace/ork/sdk/go/reconciler"
)

// Spec is the WebApp's spec (examples/remote/crd.yaml).
type Spec struct {
	Image    string `json:"image"`
	Replicas int64  `json:"replicas"`
	Port     int64  `json:"port"`
}

// Reconcile is the whole business logic: one Deployment and one Service per WebApp.
// It answers at once; work that would outlast the timeout answers
// reconciler.Pending(id, pollAfter) instead, its job keyed on req.OperationKey(), and ork
// polls until a final answer (docs/remote-reconciler.md#operations).
func Reconcile(_ context.Context, req *reconciler.PreparedRequest) (reconciler.Result, error) {
	if req.Prepared.Deleting {
		return reconciler.OK(), nil // children carry ownerReferences: the garbage collector removes them
	}
	var spec Spec
	if err := req.Object.DecodeSpec(&spec); err != nil {
		return reconciler.Result{}, err
	}
	if spec.Image == "" {
		return reconciler.Errorf("spec.image is required"), nil
	}
	name := req.Object.Name()
	port := spec.Port
	if port == 0 {
		port = 8080
	}
	replicas := spec.Replicas
	if replicas == 0 {
		replicas = 1
	}
	return reconciler.OK().
		WithStatus(map[string]any{"phase": "Ready", "replicas": replicas, "url": "http://" + name + "-svc"}).
		WithResources(
			reconciler.Deployment(reconciler.DeploymentFields{Name: name, Image: spec.Image, Replicas: &replicas, Port: &port}),
			reconciler.Service(reconciler.ServiceFields{Name: name + "-svc", Port: 80, TargetPort: reconciler.Int(port)}),
		), nil
}
