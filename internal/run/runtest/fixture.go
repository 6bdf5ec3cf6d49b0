package runtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

// TestToken is the reconciler token in each fixture's Secret reconciler-token.
const TestToken = "s3cr3t-token-value"

// Fixture is one test's world: a CRD of its own (a unique group, so engines of parallel
// tests never see each other's objects), a namespace, a token Secret and a Katalog.
type Fixture struct {
	T   testing.TB
	Env *testenv.Env
	// NS is the test's namespace: the CRs', the token Secret's and ork's own.
	NS string
	// Group is the App CRD's group; GVR its resource.
	Group string
	GVR   schema.GroupVersionResource
	Dyn   dynamic.Interface
	// Dir is the test's temporary directory, where the CRD and the Katalog are written.
	Dir string
	// Katalog is the path WriteKatalog wrote.
	Katalog string
	// Metrics and Logs are the last engine's (NewEngine sets Metrics; Logs collects every
	// engine's log lines).
	Metrics *run.Metrics
	Logs    *testkit.SyncBuffer
	// Cluster is true when the App CRD is cluster-scoped (CRs have no namespace).
	Cluster bool
}

// CRDOptions vary the test CRD; the zero value is namespaced with a free-form status
// subresource.
type CRDOptions struct {
	Cluster  bool
	NoStatus bool
	// StatusProps is YAML for status.properties (indented 18 spaces by the caller), making
	// the status schema strict about those fields.
	StatusProps string
	// PrunedStatus drops x-kubernetes-preserve-unknown-fields from a StatusProps schema: the
	// apiserver prunes every other status key.
	PrunedStatus bool
}

// NewFixture is a fixture whose CRD group is derived from the test's name.
func NewFixture(t testing.TB, env *testenv.Env) *Fixture {
	return NewFixtureWith(t, env, t.Name(), CRDOptions{})
}

// NewFixtureWith is NewFixture with a variant of the App CRD; id picks the CRD group, for
// several fixtures in one test.
func NewFixtureWith(t testing.TB, env *testenv.Env, id string, o CRDOptions) *Fixture {
	t.Helper()
	e := env.Require(t)
	// The id plus randomness: -count=N reruns get groups of their own too.
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	sum := sha256.Sum256(append([]byte(id), salt...))
	group := "t" + hex.EncodeToString(sum[:5]) + ".ork.test"
	f := &Fixture{
		T:       t,
		Env:     e,
		NS:      e.Namespace(t),
		Group:   group,
		GVR:     schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"},
		Dir:     t.TempDir(),
		Logs:    &testkit.SyncBuffer{},
		Cluster: o.Cluster,
	}
	var err error
	if f.Dyn, err = dynamic.NewForConfig(e.Config); err != nil {
		t.Fatal(err)
	}
	e.InstallCRD(t, f.WriteCRDWith("App", "apps", o))
	_, err = e.Clientset.CoreV1().Secrets(f.NS).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "reconciler-token"},
		StringData: map[string]string{"token": TestToken},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// InstallCRD installs a namespaced CRD of kind in the fixture's group, with a status
// subresource and free-form spec and status.
func (f *Fixture) InstallCRD(kind, plural string) {
	f.T.Helper()
	f.Env.InstallCRD(f.T, f.WriteCRD(kind, plural))
}

// WriteCRD writes the manifest InstallCRD installs and returns its path.
func (f *Fixture) WriteCRD(kind, plural string) string {
	return f.WriteCRDWith(kind, plural, CRDOptions{})
}

// WriteCRDWith writes the manifest of a CRD of kind in the fixture's group, varied by o,
// and returns its path.
func (f *Fixture) WriteCRDWith(kind, plural string, o CRDOptions) string {
	f.T.Helper()
	scope, subresources := "Namespaced", "\n      subresources: {status: {}}"
	if o.Cluster {
		scope = "Cluster"
	}
	if o.NoStatus {
		subresources = ""
	}
	status := "{type: object, x-kubernetes-preserve-unknown-fields: true}"
	if o.StatusProps != "" {
		status = "\n              type: object\n              x-kubernetes-preserve-unknown-fields: true\n              properties:\n" + o.StatusProps
	}
	if o.StatusProps != "" && o.PrunedStatus {
		status = "\n              type: object\n              properties:\n" + o.StatusProps
	}
	manifest := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.%[3]s
spec:
  group: %[3]s
  scope: %[5]s
  names: {kind: %[1]s, plural: %[2]s, singular: %[4]s, listKind: %[1]sList}
  versions:
    - name: v1
      served: true
      storage: true%[6]s
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: %[7]s
`, kind, plural, f.Group, strings.ToLower(kind), scope, subresources, status)
	path := filepath.Join(f.Dir, plural+"-crd.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		f.T.Fatal(err)
	}
	return path
}
