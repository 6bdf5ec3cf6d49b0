package bundle_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/orkspace/ork/internal/bundle"
)

// readmeUninstallByLabel are the README's commands that delete ork's own objects by their
// label and keep the CRDs (and so every custom resource), for the operator webapp-operator.
func readmeUninstallByLabel(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "kubectl delete ") && strings.Contains(line, "-l app.kubernetes.io/name=webapp-operator") {
			cmds = append(cmds, strings.Fields(line)[1:])
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("README has %d uninstall-by-label kubectl commands, want the 2 this test runs", len(cmds))
	}
	return cmds
}

// README's uninstall by label deletes every object of the bundle but its Namespace and its
// CRDs: the custom resources stay, and so does another operator in the same namespace.
func TestUninstallByLabelKeepsTheCRDs(t *testing.T) {
	env.Require(t)
	t.Parallel()
	name := uniq("ork-uninstall")
	group := name + ".example.com"
	b, manifest := testBundle(t, name, group)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	cleanupBundle(t, manifest)
	env.Kubectl(t, manifest, "apply", "--server-side", "-f", "-")
	env.Kubectl(t, nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/apps."+group)
	apps := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "App", "metadata": map[string]any{"name": "kept"}, "spec": map[string]any{},
	}}
	if _, err := dyn.Resource(apps).Namespace(name).Create(t.Context(), cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, args := range readmeUninstallByLabel(t) {
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "webapp-operator", name)
		}
		env.Kubectl(t, nil, args...)
	}

	for _, o := range b.Objects {
		gvk := o.GroupVersionKind()
		keep := gvk.Kind == "Namespace" || gvk.Kind == "CustomResourceDefinition"
		eventually(t, "the uninstall of "+gvk.Kind+" "+o.GetName(), func(ctx context.Context) (bool, error) {
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return false, err
			}
			_, err = dyn.Resource(mapping.Resource).Namespace(o.GetNamespace()).Get(ctx, o.GetName(), metav1.GetOptions{})
			switch {
			case keep && err == nil, !keep && apierrors.IsNotFound(err):
				return true, nil
			case keep && apierrors.IsNotFound(err):
				t.Fatalf("the uninstall by label deleted %s %s, which it must keep", gvk.Kind, o.GetName())
			}
			return false, err
		})
	}
	if _, err := dyn.Resource(apps).Namespace(name).Get(t.Context(), "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("the custom resource did not survive the uninstall by label: %v", err)
	}
}

// testBundle generates the bundle of a fresh test Katalog (its own CRD group) named name, in
// namespace name, and its manifest.
func testBundle(t *testing.T, name, group string) (*bundle.Bundle, []byte) {
	t.Helper()
	set := load(t, testKatalog(t, t.TempDir(), group, "https://reconciler.example.com/reconcile", ""))
	b, err := bundle.Generate(set, bundle.Options{Name: name, Namespace: name, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := b.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return b, manifest
}
