package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	sigsyaml "sigs.k8s.io/yaml"
)

// InstallCRD applies the CRD manifest at path (server-side apply, so installing it again is
// fine) and waits until it is Established and discovery serves it; failures fail t.
func (e *Env) InstallCRD(t testing.TB, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := e.ApplyCRD(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// ApplyCRD is InstallCRD for callers without a testing.TB, such as TestMain.
func (e *Env) ApplyCRD(ctx context.Context, path string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testenv: read CRD: %w", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := sigsyaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, fmt.Errorf("testenv: decode CRD %s: %w", path, err)
	}
	body, err := json.Marshal(&crd)
	if err != nil {
		return nil, fmt.Errorf("testenv: encode CRD %s: %w", path, err)
	}
	client, err := apiextensionsclient.NewForConfig(e.Config)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	force := true
	if _, err := crds.Patch(ctx, crd.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: "ork-testenv", Force: &force}); err != nil {
		return nil, fmt.Errorf("testenv: apply CRD %s: %w", crd.Name, err)
	}
	// Established usually takes well under a second; the bound catches a broken CRD.
	var got *apiextensionsv1.CustomResourceDefinition
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return established(got) && e.discoveryServes(got), nil
	})
	if err != nil {
		return nil, fmt.Errorf("testenv: wait for CRD %s to be Established and served: %w", crd.Name, err)
	}
	return got, nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
		return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
	})
}

// discoveryServes reports whether every served version lists the plural: clients that
// resolve resources through discovery (kubectl, RESTMappers) lag Established briefly.
func (e *Env) discoveryServes(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		list, err := e.Clientset.Discovery().ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
		if err != nil {
			return false
		}
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }) {
			return false
		}
	}
	return true
}
