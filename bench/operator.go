package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/orkspace/ork/internal/resources"
)

// The alternative a user weighs against ork is writing the operator in Go with
// controller-runtime, so the benchmark measures one: the same writes per CR as ceiling (a),
// with the reconcile logic in-process (no webhook), written the way the kubebuilder scaffold
// writes it — For the CR, Owns its Deployment and Service, reads from the manager's cache,
// server-side apply of the children with a controller reference, and a status patch only
// while the status is not yet Ready. Like ork under --namespace, it caches one namespace,
// and it logs (through slog, to its log file) as ork does. Its strongest honest
// configuration: the CR read from the cache (not live, as controller-runtime's client reads
// unstructured objects by default), the children watched as metadata only, and 32 workers.
// It answers the default workload only.
//
// Two variants: controller-runtime's defaults (1 worker; its config loader disables the
// client-side rate limit and relies on API Priority and Fairness), and 32 workers, ork's
// default.

// operatorSystems maps a system name to its MaxConcurrentReconciles.
var operatorSystems = map[string]int{"controller-runtime": 1, "controller-runtime-32": 32}

// startOperator runs this program as the controller-runtime operator (runOperator).
func startOperator(ctx context.Context, c *cluster, workers int) (*running, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	kubeconfig, err := filepath.Abs(c.env.Kubeconfig)
	if err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-mode=operator", "-workers", strconv.Itoa(workers), "-health-addr", health, "-namespace", c.ns)
	// controller-runtime's own loader (ctrl.GetConfig) reads KUBECONFIG, as an operator would.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	r, err := start(cmd, filepath.Join(c.dir, fmt.Sprintf("controller-runtime-%d.log", workers)))
	if err != nil {
		return nil, err
	}
	if err := r.waitReady(ctx, "controller-runtime operator", health); err != nil {
		return nil, err
	}
	return r, nil
}

func runOperator(ctx context.Context, group, namespace string, workers int, healthAddr string) error {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil)))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: healthAddr,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		// The CR is unstructured here (no Go types for it in this program); a scaffolded
		// operator has typed, cached reads, which this gives it.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return err
	}
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "App"}
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(gvk)
	// The children are watched as metadata only (builder.OnlyMetadata): the operator never
	// reads them, and whole objects would cost it decoding and memory for nothing.
	watched := []client.Object{app, metadataOnly(appsv1.SchemeGroupVersion.WithKind("Deployment")),
		metadataOnly(corev1.SchemeGroupVersion.WithKind("Service"))}
	// Ready once the controller's three informers synced, as ork's /readyz is.
	err = mgr.AddReadyzCheck("caches", func(req *http.Request) error {
		for _, obj := range watched {
			inf, err := mgr.GetCache().GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				return err
			}
			if !inf.HasSynced() {
				return fmt.Errorf("%T not synced", obj)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("app").
		For(app).
		Owns(&appsv1.Deployment{}, builder.OnlyMetadata).
		Owns(&corev1.Service{}, builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(&appReconciler{c: mgr.GetClient(), gvk: gvk})
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func metadataOnly(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

type appReconciler struct {
	c   client.Client
	gvk schema.GroupVersionKind
}

func (r *appReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(r.gvk)
	if err := r.c.Get(ctx, req.NamespacedName, cr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, raw := range workloads["default"].answer(cr.GetName())["resources"].([]any) {
		o, err := resources.Build(raw.(map[string]any), resources.OptionsFor(req.Namespace, cr.GetName()))
		if err != nil {
			return ctrl.Result{}, err
		}
		o.Obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(cr, r.gvk)})
		if err := r.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.Obj),
			client.FieldOwner("bench-operator"), client.ForceOwnership); err != nil {
			return ctrl.Result{}, fmt.Errorf("apply %s: %w", o.Obj.GetName(), err)
		}
	}
	if phase, _, _ := unstructured.NestedString(cr.Object, "status", "phase"); phase == "Ready" {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.c.Status().Patch(ctx, cr, client.RawPatch(types.MergePatchType, readyStatus))
}
