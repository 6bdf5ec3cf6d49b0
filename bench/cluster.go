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
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/testenv"
)

// benchGroup is the group of the benchmark's CRD.
const benchGroup = "bench.ork.test"

func crGVR(group string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}
}

// cluster is a fresh control plane with the benchmark's CRD and namespace.
type cluster struct {
	env *testenv.Env
	dyn dynamic.Interface
	ns  string
	dir string
}

func newCluster(ctx context.Context, dir string) (*cluster, error) {
	env, err := testenv.Start(ctx)
	if err != nil {
		return nil, err
	}
	c := &cluster{env: env, ns: "bench", dir: dir}
	crd := filepath.Join(dir, "crd.yaml")
	if err := os.WriteFile(crd, []byte(crdManifest), 0o600); err != nil {
		return nil, c.stop(err)
	}
	if _, err := env.ApplyCRD(ctx, crd); err != nil {
		return nil, c.stop(err)
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
	return c, nil
}

func (c *cluster) stop(cause error) error {
	if err := c.env.Stop(); err != nil && cause == nil {
		return err
	}
	return cause
}

// createCRs creates n CRs from 32 goroutines and calls created with each name as soon as it
// exists, recording when.
func (c *cluster) createCRs(ctx context.Context, n int, created func(name string, at time.Time)) error {
	names := make(chan string, n)
	for i := range n {
		names <- fmt.Sprintf("app-%05d", i)
	}
	close(names)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for name := range names {
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": benchGroup + "/v1", "kind": "App",
					"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": int64(1)},
				}}
				if _, err := c.dyn.Resource(crGVR(benchGroup)).Namespace(c.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create %s: %w", name, err)
					return
				}
				created(name, time.Now())
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

const crdManifest = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: apps.` + benchGroup + `
spec:
  group: ` + benchGroup + `
  scope: Namespaced
  names: {kind: App, plural: apps, singular: app, listKind: AppList}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
