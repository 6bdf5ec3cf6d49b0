package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/testenv"
)

// benchGroup is the group of the benchmark's CRD.
const benchGroup = "bench.ork.test"

func crGVR(plural string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: benchGroup, Version: "v1", Resource: plural}
}

// cluster is a fresh control plane with the workload's CRDs and the benchmark's namespace.
type cluster struct {
	env *testenv.Env
	dyn dynamic.Interface
	ns  string
	dir string
	w   workload
}

func newCluster(ctx context.Context, dir string, w workload) (*cluster, error) {
	return newClusterWith(ctx, dir, w, testenv.Options{})
}

// newClusterWith is newCluster with the apiserver's options (its feature gates).
func newClusterWith(ctx context.Context, dir string, w workload, opts testenv.Options) (*cluster, error) {
	env, err := testenv.StartWith(ctx, opts)
	if err != nil {
		return nil, err
	}
	c := &cluster{env: env, ns: "bench", dir: dir, w: w}
	for _, k := range w.kinds {
		crd := filepath.Join(dir, "crd-"+k.plural+".yaml")
		if err := os.WriteFile(crd, []byte(crdManifest(k)), 0o600); err != nil {
			return nil, c.stop(err)
		}
		if _, err := env.ApplyCRD(ctx, crd); err != nil {
			return nil, c.stop(err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1 // the harness must never be what throttles a system
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, c.stop(err)
	}
	_, err = env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{})
	if err != nil {
		return nil, c.stop(err)
	}
	if err := c.warmUp(ctx); err != nil {
		return nil, c.stop(err)
	}
	return c, nil
}

// warmUp sends one dry-run create of a CR of each kind: a fresh apiserver's first create of
// a CRD's objects takes it about 2 s to prepare (measured on the test machine), which no
// system's time should include. Dry run: nothing is stored.
func (c *cluster) warmUp(ctx context.Context) error {
	for _, k := range c.w.kinds {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": benchGroup + "/v1", "kind": k.kind,
			"metadata": map[string]any{"name": "warm-up"}, "spec": map[string]any{"replicas": int64(1)},
		}}
		if _, err := c.dyn.Resource(crGVR(k.plural)).Namespace(c.ns).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return fmt.Errorf("warm up %s: %w", k.plural, err)
		}
	}
	return nil
}

func (c *cluster) stop(cause error) error {
	if err := c.env.Stop(); err != nil && cause == nil {
		return err
	}
	return cause
}

// createdCR is one CR the harness created: what the ceilings are fed.
type createdCR struct {
	plural, name string
	uid          types.UID
	at           time.Time
}

// crName is the i-th CR's name, unique across the workload's CRDs.
func crName(i int) string { return fmt.Sprintf("app-%05d", i) }

// createCRs creates n CRs, split across the workload's CRDs, from 32 goroutines and calls
// created with each as soon as it exists.
func (c *cluster) createCRs(ctx context.Context, n int, created func(createdCR)) error {
	idx := make(chan int, n)
	for i := range n {
		idx <- i
	}
	close(idx)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for i := range idx {
				k, name := c.w.kindOf(i), crName(i)
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": benchGroup + "/v1", "kind": k.kind,
					"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": int64(1)},
				}}
				out, err := c.dyn.Resource(crGVR(k.plural)).Namespace(c.ns).Create(ctx, u, metav1.CreateOptions{})
				if err != nil {
					errs <- fmt.Errorf("create %s: %w", name, err)
					return
				}
				created(createdCR{plural: k.plural, name: name, uid: out.GetUID(), at: time.Now()})
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
