package bundle_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

var env *testenv.Env

// bins builds ork once per test binary; TestMain removes it.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(testenv.Main(m, &env))) }

// uniq is a name no parallel test or earlier run shares: bundles are cluster-wide (CRDs,
// ClusterRoles, FlowSchemas), so every test gets its own names, group and namespace.
func uniq(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// testKatalog writes a Katalog with a crdFile of its own group into dir and returns its path.
// endpoint and caFile ("" for none) configure its remote reconciler.
func testKatalog(t *testing.T, dir, group, endpoint, caFile string) string {
	t.Helper()
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: apps.%[1]s
spec:
  group: %[1]s
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
`, group)
	tls := ""
	if caFile != "" {
		tls = "\n            tls: {caFile: " + caFile + "}"
	}
	k := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: bundle-e2e}
spec:
  crds:
    app:
      crdFile: crd.yaml
      crFiles: [cr.yaml]
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: %q
            timeout: 10s
            args: {size: "{{ .spec.size }}"}
            managedResources:
              - {group: "", plural: configmaps}
            auth:
              secretRef: {name: reconciler-token, key: token}%s
`, endpoint, tls)
	for name, content := range map[string]string{"crd.yaml": crd, "katalog.yaml": k, "cr.yaml": "not read by the bundle"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "katalog.yaml")
}

// eventually polls cond every 100ms for up to 60s: the apiserver converges in well under a
// second, the bound only catches what never happens (2 busy cores can be slow).
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	testkit.Eventually(t, what, 100*time.Millisecond, 60*time.Second, cond)
}

// resourceVersions are the bundle's objects' resourceVersions as the apiserver has them.
func resourceVersions(t *testing.T, manifest []byte) map[string]string {
	t.Helper()
	var list struct {
		Items []unstructured.Unstructured `json:"items"`
	}
	if err := json.Unmarshal([]byte(env.Kubectl(t, manifest, "get", "-f", "-", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	rvs := map[string]string{}
	for _, o := range list.Items {
		rvs[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
	}
	return rvs
}

// cleanupBundle deletes what the bundle created cluster-wide (its namespace included).
func cleanupBundle(t *testing.T, manifest []byte) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := testenvKubectl(ctx, manifest, "delete", "--ignore-not-found", "--wait=false", "-f", "-"); err != nil {
			t.Errorf("delete the bundle: %v", err)
		}
	})
}

// The apiserver has the leader-election priority level the FlowSchema names, by default.
func TestLeaderElectionPriorityLevelExistsByDefault(t *testing.T) {
	env.Require(t)
	got := env.Kubectl(t, nil, "get", "prioritylevelconfigurations", bundle.LeaderElectionPriorityLevel, "-o", "name")
	if strings.TrimSpace(got) != "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/"+bundle.LeaderElectionPriorityLevel {
		t.Errorf("kubectl get prioritylevelconfigurations: %q", got)
	}
	schemas := env.Kubectl(t, nil, "get", "flowschemas", "-o", "jsonpath={range .items[*]}{.metadata.name}={.spec.matchingPrecedence}{\"\\n\"}{end}")
	for _, want := range []string{"service-accounts=9000", "kube-system-service-accounts=900"} {
		if !strings.Contains(schemas, want+"\n") {
			t.Errorf("default FlowSchema %s is gone or moved (the bundle's precedence sits before it):\n%s", want, schemas)
		}
	}
}

// `kubectl apply --server-side` takes the bundle, and a second apply changes nothing.
func TestBundleAppliesTwiceWithoutChange(t *testing.T) {
	env.Require(t)
	t.Parallel()
	name := uniq("ork-apply")
	b, manifest := testBundle(t, name, name+".example.com")
	cleanupBundle(t, manifest)
	env.Kubectl(t, manifest, "apply", "--server-side", "-f", "-")
	// The apiserver's own controllers write the CRD's and the FlowSchema's status once;
	// wait for them, so that only a second apply could change a resourceVersion.
	env.Kubectl(t, nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/apps."+name+".example.com")
	env.Kubectl(t, nil, "wait", "--for=condition=Dangling=False", "--timeout=60s", "flowschema/"+name+"-leader-election")
	before := resourceVersions(t, manifest)
	if len(before) != len(b.Objects) {
		t.Fatalf("the apiserver has %d of the bundle's %d objects: %v", len(before), len(b.Objects), before)
	}
	env.Kubectl(t, manifest, "apply", "--server-side", "-f", "-")
	if d := cmp.Diff(before, resourceVersions(t, manifest)); d != "" {
		t.Errorf("a second apply changed objects (-first +second resourceVersion):\n%s", d)
	}
}

// The pod template passes the restricted Pod Security profile, as the apiserver's admission
// enforces it on a namespace labelled so (a dry-run create: no pod is left behind).
func TestPodTemplateIsRestricted(t *testing.T) {
	e := env.Require(t)
	t.Parallel()
	ns := e.Namespace(t)
	e.Kubectl(t, nil, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
	d := deploymentOf(t, generate(t, bundle.Options{}, remoteExample))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ork", Namespace: ns}, Spec: d.Spec.Template.Spec}
	create := func(p *corev1.Pod) error {
		_, err := e.Clientset.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	// The label reaches admission through an informer: poll with a pod that must be refused
	// until it is, so the passing create below is a real check.
	privileged := pod.DeepCopy()
	privileged.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
	eventually(t, "the restricted profile enforced in "+ns, func(context.Context) (bool, error) {
		err := create(privileged)
		return apierrors.IsForbidden(err), nil
	})
	if err := create(pod); err != nil {
		t.Errorf("the bundle's pod is refused under the restricted profile: %v", err)
	}
}

// toTyped converts an unstructured object into a typed one.
func toTyped(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatal(err)
	}
}

// testenvKubectl is env.Kubectl for cleanups, which run after the test's context ended.
func testenvKubectl(ctx context.Context, stdin []byte, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(env.BinDir, "kubectl"), append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// testenvKubectlOut runs kubectl and returns its combined output, failing or not.
func testenvKubectlOut(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(env.BinDir, "kubectl"), append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
