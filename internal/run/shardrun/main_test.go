// Package shardrun_test runs several real `ork run --shard-buckets` processes against one
// real kube-apiserver started with the ShardedListAndWatch feature gate.
package shardrun_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

var (
	env  *testenv.Env
	bins testkit.Binaries
)

func TestMain(m *testing.M) {
	os.Exit(bins.RemoveAfter(testenv.MainWith(m, &env, testenv.Options{FeatureGates: "ShardedListAndWatch=true"})))
}

// Short Leases keep the tests fast; the ratios are client-go's defaults (15/10/2 s scaled).
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
	// jitteredRetry is the longest wait between two Manager rounds (wait.Jitter adds up to
	// 20%).
	jitteredRetry = retryPeriod * 12 / 10
	// slack covers what a loaded 2-core machine adds: process start-up, watch delivery,
	// a pass's writes queued behind other sessions' builds.
	slack = 15 * time.Second
)

// leaseTimes are a ring's --leader-elect-* flags.
type leaseTimes struct{ duration, renew, retry time.Duration }

// jittered is the longest wait between two Manager rounds (wait.Jitter adds up to 20%).
func (l leaseTimes) jittered() time.Duration { return l.retry * 12 / 10 }

var shortLeases = leaseTimes{leaseDuration, renewDeadline, retryPeriod}

var widgets = schema.GroupVersionResource{Group: "testenv.orkspace.io", Version: "v1", Resource: "widgets"}

// fixture is one test's namespace, Katalog and reconciler.
type fixture struct {
	t       *testing.T
	ns      string
	katalog string
	bin     string
	dyn     dynamic.ResourceInterface
	// ep answers every call at once with status.seen = spec.v.
	ep *reconcilertest.Endpoint
	// env is added to each replica's environment (after POD_NAME).
	env []string
	// leases are the replicas' Lease times (shortLeases unless a test sets them).
	leases leaseTimes
}

func newFixture(t *testing.T) *fixture { return newFixtureTimeout(t, "5s") }

// newFixtureTimeout is newFixture with the remote timeout given.
func newFixtureTimeout(t *testing.T, timeout string) *fixture {
	e := env.Require(t)
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	e.InstallCRD(t, "../../testenv/testdata/widgets.crd.yaml")
	f := &fixture{t: t, ns: e.Namespace(t), bin: bin, leases: shortLeases}
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	f.dyn = dyn.Resource(widgets).Namespace(f.ns)
	f.ep = newEndpoint(t)
	f.katalog = filepath.Join(t.TempDir(), "katalog.yaml")
	k := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    widget:
      apiTypes: {group: testenv.orkspace.io, version: v1, kind: Widget, plural: widgets}
      operatorBox:
        reconcile:
          default: false
          workers: 4
          remote:
            endpoint: %s
            timeout: %s
            managedResources: [{group: "", plural: configmaps}]
`, f.ep.URL(), timeout)
	if err := os.WriteFile(f.katalog, []byte(k), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// newEndpoint is a reconciler that answers status.seen = spec.v at once, with a ConfigMap
// of the CR's name whose data.v is spec.v.
func newEndpoint(t *testing.T) *reconcilertest.Endpoint {
	return reconcilertest.NewEndpoint(t, seenAnswer, reconcilertest.EndpointOptions{})
}

// seenAnswer is the everyday answer: status.seen = spec.v, and a ConfigMap of the CR's name
// whose data.v is spec.v.
func seenAnswer(c reconcilertest.Call) reconcilertest.Response {
	obj, _ := c.Body["object"].(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	md, _ := obj["metadata"].(map[string]any)
	return reconcilertest.JSON(map[string]any{"result": "ok", "status": map[string]any{"seen": spec["v"]},
		"resources": []any{map[string]any{"type": "configmap", "fields": map[string]any{"name": md["name"], "data": map[string]any{"v": spec["v"]}}}}})
}

// orkProcess is one `ork run` replica.
type orkProcess struct {
	*testkit.Process
	pod  string
	logs *testkit.SyncBuffer
}

// start runs a replica named pod (its member Lease) with args after the common ones.
func (f *fixture) start(pod string, args ...string) *orkProcess {
	f.t.Helper()
	cmd := exec.Command(f.bin, append([]string{"run", "-f", f.katalog, "--kubeconfig", env.Kubeconfig,
		"--namespace", f.ns, "--watch-namespace", f.ns, "--health-addr=", "--metrics-addr=", "--preflight=false",
		"--leader-elect-lease-duration=" + f.leases.duration.String(),
		"--leader-elect-renew-deadline=" + f.leases.renew.String(),
		"--leader-elect-retry-period=" + f.leases.retry.String()}, args...)...)
	cmd.Env = append(append(os.Environ(), "POD_NAME="+pod), f.env...)
	p := &orkProcess{pod: pod, logs: &testkit.SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	p.Process = testkit.Start(f.t, cmd)
	// A test may end with the process stopped (SIGSTOP): SIGCONT before the kill.
	f.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		if f.t.Failed() {
			f.t.Logf("ork %s:\n%s", pod, p.logs.String())
		}
	})
	return p
}

// sharded starts a replica of a ring of b buckets.
func (f *fixture) sharded(pod string, b int, args ...string) *orkProcess {
	return f.start(pod, append([]string{fmt.Sprintf("--shard-buckets=%d", b)}, args...)...)
}

// create makes n widgets with spec.v = v.
// remoteOption adds opt, one line of YAML, to the Katalog's reconcile.remote before its
// managedResources, for the replicas started after it.
func (f *fixture) remoteOption(opt string) {
	f.t.Helper()
	k, err := os.ReadFile(f.katalog)
	if err != nil {
		f.t.Fatal(err)
	}
	patched := strings.Replace(string(k), "managedResources:", opt+"\n            managedResources:", 1)
	if patched == string(k) {
		f.t.Fatalf("the Katalog has no managedResources to put %q before", opt)
	}
	if err := os.WriteFile(f.katalog, []byte(patched), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) create(n int, v string) []*unstructured.Unstructured {
	f.t.Helper()
	var out []*unstructured.Unstructured
	for i := range n {
		w := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": v}}}
		w.SetAPIVersion("testenv.orkspace.io/v1")
		w.SetKind("Widget")
		w.SetName(fmt.Sprintf("w-%03d", i))
		got, err := f.dyn.Create(f.t.Context(), w, metav1.CreateOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// setV writes spec.v = v on the named widget.
func (f *fixture) setV(name, v string) {
	f.t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"v":%q}}`, v)
	if _, err := f.dyn.Patch(f.t.Context(), name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// unconverged lists the widgets whose status.seen is not want[name].
func (f *fixture) unconverged(ctx context.Context, want map[string]string) ([]string, error) {
	list, err := f.dyn.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range list.Items {
		seen, _, _ := unstructured.NestedString(w.Object, "status", "seen")
		if v, ok := want[w.GetName()]; ok && seen != v {
			out = append(out, w.GetName())
		}
	}
	return out, nil
}

// waitConverged waits until every widget of want shows its value, at most within.
func (f *fixture) waitConverged(what string, within time.Duration, want map[string]string) {
	f.t.Helper()
	testkit.Eventually(f.t, what, 100*time.Millisecond, within, func(ctx context.Context) (bool, error) {
		left, err := f.unconverged(ctx, want)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("%d not converged: %v", len(left), left)
		}
		return err == nil, err
	})
}

// holders maps each bucket of b to the member (pod) whose identity holds its Lease; ""
// when free or missing.
func (f *fixture) holders(ctx context.Context, b int) (map[int]string, error) {
	list, err := env.Clientset.CoordinationV1().Leases(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, l := range list.Items {
		i, lb, ok := naming.ParseBucketLeaseName("orkestra", l.Name)
		if !ok || lb != b || l.Spec.HolderIdentity == nil {
			continue
		}
		pod, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
		out[i] = pod
	}
	return out, nil
}
