package crschema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/crschema"
	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// For every sample CR of each case, the offline verdict (no problem, or some) equals the
// apiserver's verdict on a server-side dry-run create with fieldValidation=Strict: verdict
// against verdict, not message against message. The cel cases' CRDs carry
// x-kubernetes-validations rules, each with CRs that pass and CRs that break them.
func TestVerdictsAgreeWithTheApiserver(t *testing.T) {
	e := env.Require(t)
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := e.Namespace(t)
	cases := []struct {
		crd, crs          string
		accepted, refused int // at least
	}{
		{"testdata/crd.yaml", "testdata/crs/*.yaml", 3, 10},
		{"testdata/cel/pools/crd.yaml", "testdata/cel/pools/crs/*.yaml", 2, 2},
		{"testdata/cel/gates/crd.yaml", "testdata/cel/gates/crs/*.yaml", 1, 2},
	}
	for _, c := range cases {
		crd := e.InstallCRD(t, c.crd)
		v, err := crschema.New(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
		if err != nil {
			t.Fatal(err)
		}
		res := dyn.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}).Namespace(ns)
		files, err := filepath.Glob(c.crs)
		if err != nil || len(files) < c.accepted+c.refused {
			t.Fatalf("want the sample CRs of %s, found %v (%v)", c.crs, files, err)
		}
		accepted, refused := 0, 0
		for _, f := range files {
			t.Run(strings.TrimSuffix(strings.TrimPrefix(f, "testdata/"), ".yaml"), func(t *testing.T) {
				docs, err := crschema.ReadFile(f)
				if err != nil || len(docs) != 1 {
					t.Fatalf("read %s: %d documents, %v", f, len(docs), err)
				}
				problems := v.Validate(docs[0].Object)
				_, serverErr := res.Create(t.Context(), &unstructured.Unstructured{Object: docs[0].Object},
					metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
				if serverErr == nil {
					accepted++
				} else {
					refused++
				}
				t.Logf("offline %+v; apiserver: %v", problems, serverErr)
				if (len(problems) == 0) != (serverErr == nil) {
					t.Errorf("offline problems %+v, apiserver: %v", problems, serverErr)
				}
			})
		}
		if accepted < c.accepted || refused < c.refused {
			t.Errorf("%s: the apiserver accepted %d and refused %d: the cases should cover both", c.crs, accepted, refused)
		}
	}
}

// For each CRD, RuleProblems finds a problem exactly when the apiserver refuses to create the
// CRD (a server-side dry run): the refused cases have a rule that does not compile and one
// above the cost limit; the others' rules are sound.
func TestRuleVerdictsAgreeWithTheApiserver(t *testing.T) {
	e := env.Require(t)
	client, err := apiextensionsclient.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/cel/*/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	refusedFiles, err := filepath.Glob("testdata/cel/refused/*.yaml")
	if err != nil || len(refusedFiles) < 2 {
		t.Fatalf("want the refused CRDs, found %v (%v)", refusedFiles, err)
	}
	refused := 0
	for _, f := range append(append(files, "testdata/crd.yaml"), refusedFiles...) {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(f, "testdata/"), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := sigsyaml.UnmarshalStrict(data, &crd); err != nil {
				t.Fatal(err)
			}
			problems, err := crschema.RuleProblems(&crd)
			if err != nil {
				t.Fatal(err)
			}
			crd.Name = "dry" + crd.Spec.Names.Plural + "." + crd.Spec.Group // no clash with an installed one
			crd.Spec.Names.Plural, crd.Spec.Names.Singular = "dry"+crd.Spec.Names.Plural, "dry"+crd.Spec.Names.Singular
			crd.Spec.Names.Kind, crd.Spec.Names.ListKind = "Dry"+crd.Spec.Names.Kind, "Dry"+crd.Spec.Names.ListKind
			_, serverErr := client.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), &crd, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if serverErr != nil {
				refused++
			}
			t.Logf("offline %+v; apiserver: %v", problems, serverErr)
			if (len(problems) == 0) != (serverErr == nil) {
				t.Errorf("offline problems %+v, apiserver: %v", problems, serverErr)
			}
		})
	}
	if refused != len(refusedFiles) {
		t.Errorf("the apiserver refused %d CRDs, want the %d of testdata/cel/refused", refused, len(refusedFiles))
	}
}
