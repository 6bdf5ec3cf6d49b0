// Package testenv runs a real etcd and kube-apiserver on loopback for integration tests, one
// control plane per test package, started from TestMain. It is for tests only.
//
// The binaries come from `make k8s-bin` (hack/build-k8s.sh), built from the pinned module
// hack/k8s-tools into $ORK_K8S_CACHE, default ~/.cache/ork/k8s/<K8sVersion>. When they are
// missing, Start fails and names that target: integration tests never skip silently. Only
// ORK_SKIP_INTEGRATION=1 (`make test-unit`) skips them, visibly.
//
// kube-controller-manager does not run by default: no garbage collection, no default
// ServiceAccounts, and a deleted namespace stays Terminating. Use a fresh namespace per test
// (Namespace); a test that needs garbage collection starts it (StartControllerManager).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// K8sVersion is the Kubernetes version of the binaries, pinned in hack/k8s-tools/go.mod.
const K8sVersion = "v1.37.2"

// SkipEnv is the environment variable that, set to 1, skips integration tests.
const SkipEnv = "ORK_SKIP_INTEGRATION"

// Env is a running control plane.
type Env struct {
	// Config is an admin (system:masters) client config.
	Config *rest.Config
	// Clientset is a client for Config.
	Clientset kubernetes.Interface
	// Kubeconfig is the path of an admin kubeconfig file, for `ork --kubeconfig` and kubectl.
	Kubeconfig string
	// BinDir holds etcd, kube-apiserver, kubectl and kube-controller-manager.
	BinDir string
	// StartupTime is how long Start took, until the apiserver was ready.
	StartupTime time.Duration

	env *envtest.Environment
	dir string

	mu sync.Mutex
	// stops end the processes tests started beside the control plane.
	stops []func()
}

// BinDir is where the binaries are expected: $ORK_K8S_CACHE, else
// ~/.cache/ork/k8s/<K8sVersion> (the same rule as hack/build-k8s.sh).
func BinDir() (string, error) {
	if d := os.Getenv("ORK_K8S_CACHE"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the k8s binaries: %w (set ORK_K8S_CACHE)", err)
	}
	return filepath.Join(home, ".cache", "ork", "k8s", K8sVersion), nil
}

// Options tune the control plane StartWith starts.
type Options struct {
	// FeatureGates is kube-apiserver's --feature-gates, e.g. "ShardedListAndWatch=true".
	// Default none (the version's defaults).
	FeatureGates string
}

// Start starts etcd and kube-apiserver on free loopback ports with RBAC authorization and
// writes an admin kubeconfig to a temporary directory; ctx bounds the wait for the apiserver
// to create its namespaces. Call Stop when done.
func Start(ctx context.Context) (*Env, error) { return StartWith(ctx, Options{}) }

// StartWith is Start with opts.
func StartWith(ctx context.Context, opts Options) (*Env, error) {
	t0 := time.Now()
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("testenv: %s not found in %s: run `make k8s-bin` first "+
				"(builds etcd, kube-apiserver, kubectl and kube-controller-manager from hack/k8s-tools, ~15 min cold), "+
				"set ORK_K8S_CACHE to a directory holding them, or set %s=1 to skip integration tests",
				name, bin, SkipEnv)
		}
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 2 * time.Minute, // generous: 2 cores may be busy compiling
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// Explicit paths so a stray KUBEBUILDER_ASSETS cannot pick other binaries.
	api := te.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(bin, "kube-apiserver")
	// A /16 holds enough Service IPs for load tests; envtest's default /24 runs out at 254.
	api.Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	if opts.FeatureGates != "" {
		api.Configure().Set("feature-gates", opts.FeatureGates)
	}
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(bin, "etcd")}
	te.ControlPlane.KubectlPath = filepath.Join(bin, "kubectl")

	if _, err := te.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("testenv: start etcd and kube-apiserver from %s: %w "+
			"(KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true shows their logs)", bin, err), te.Stop())
	}
	e := &Env{Config: te.Config, BinDir: bin, env: te}
	if err := e.finish(ctx, te); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	e.StartupTime = time.Since(t0)
	return e, nil
}

// finish writes the kubeconfig, builds the clientset and waits for the "default" namespace,
// which the apiserver creates just after it reports ready.
func (e *Env) finish(ctx context.Context, te *envtest.Environment) error {
	dir, err := os.MkdirTemp("", "ork-testenv-")
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	e.dir = dir
	e.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(e.Kubeconfig, te.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("testenv: write kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("testenv: clientset: %w", err)
	}
	e.Clientset = cs
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("testenv: wait for namespace default: %w", err)
	}
	return nil
}

// Stop stops kube-apiserver and etcd (only the processes Start started) and removes the
// temporary files.
func (e *Env) Stop() error {
	e.mu.Lock()
	stops := e.stops
	e.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	err := e.env.Stop()
	if e.dir != "" {
		err = errors.Join(err, os.RemoveAll(e.dir))
	}
	if err != nil {
		return fmt.Errorf("testenv: stop: %w", err)
	}
	return nil
}
