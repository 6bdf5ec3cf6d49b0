package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orkspace/ork/internal/resources"
)

// ceilingWorkers is the ceiling's parallelism: enough to keep a 2-core apiserver saturated.
const ceilingWorkers = 32

// runCeiling is the apiserver's own limit: for every CR name read from in, exactly the writes
// ork makes per CR (a server-side apply of the Deployment and of the Service, one status
// patch), from 32 goroutines, with no client-side rate limit, no informer and no webhook.
func runCeiling(ctx context.Context, kubeconfig, namespace, group string, in io.Reader) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS = -1 // the apiserver's limit, never a client-side one
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	names := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			names <- sc.Text()
		}
		close(names)
	}()
	var wg sync.WaitGroup
	errs := make(chan error, ceilingWorkers)
	for range ceilingWorkers {
		wg.Go(func() {
			for name := range names {
				if err := ceilingWrites(ctx, dyn, namespace, group, name); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// readyStatus is the status patch the ceiling and the controller-runtime operator write: what
// ork writes for the reconciler's answer.
var readyStatus = []byte(`{"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True","reason":"ReconcileSucceeded","message":"reconciled","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)

func ceilingWrites(ctx context.Context, dyn dynamic.Interface, namespace, group, name string) error {
	ans := answer(name)
	for _, raw := range ans["resources"].([]any) {
		o, err := resources.Build(raw.(map[string]any), resources.OptionsFor(namespace, name))
		if err != nil {
			return err
		}
		gvr := o.Type.GVR()
		if _, err := dyn.Resource(gvr).Namespace(namespace).Apply(ctx, o.Obj.GetName(), o.Obj,
			metav1.ApplyOptions{FieldManager: "ceiling", Force: true}); err != nil {
			return fmt.Errorf("apply %s/%s: %w", gvr.Resource, o.Obj.GetName(), err)
		}
	}
	_, err := dyn.Resource(crGVR(group)).Namespace(namespace).Patch(ctx, name, types.MergePatchType, readyStatus, metav1.PatchOptions{}, "status")
	return err
}
