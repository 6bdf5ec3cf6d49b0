package crschema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/crschema"
	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// For every sample CR of testdata/crs, the offline verdict (no problem, or some) equals the
// apiserver's verdict on a server-side dry-run create with fieldValidation=Strict: verdict
// against verdict, not message against message.
func TestVerdictsAgreeWithTheApiserver(t *testing.T) {
	e := env.Require(t)
	crd := e.InstallCRD(t, "testdata/crd.yaml")
	v, err := crschema.New(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := e.Namespace(t)
	shops := dyn.Resource(schema.GroupVersionResource{Group: "agree.example", Version: "v1", Resource: "shops"}).Namespace(ns)
	files, err := filepath.Glob("testdata/crs/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("want the sample CRs, found %v (%v)", files, err)
	}
	accepted, refused := 0, 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			docs, err := crschema.ReadFile(f)
			if err != nil || len(docs) != 1 {
				t.Fatalf("read %s: %d documents, %v", f, len(docs), err)
			}
			problems := v.Validate(docs[0].Object)
			_, serverErr := shops.Create(t.Context(), &unstructured.Unstructured{Object: docs[0].Object},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
			if serverErr == nil {
				accepted++
			} else {
				refused++
			}
			if (len(problems) == 0) != (serverErr == nil) {
				t.Errorf("offline problems %+v, apiserver: %v", problems, serverErr)
			}
		})
	}
	if accepted < 3 || refused < 10 {
		t.Errorf("the apiserver accepted %d and refused %d: the cases should cover both", accepted, refused)
	}
}
