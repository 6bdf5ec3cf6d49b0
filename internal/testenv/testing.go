package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Main is the body of an integration package's TestMain: it starts the control plane into
// *env, runs the tests, stops it and returns the exit code:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
// With ORK_SKIP_INTEGRATION=1 it starts nothing and leaves *env nil; Require then skips.
// A failed start fails the package with the reason (missing binaries name `make k8s-bin`).
func Main(m *testing.M, env **Env) int { return MainWith(m, env, Options{}) }

// MainWith is Main with the control plane started by StartWith(opts).
func MainWith(m *testing.M, env **Env, opts Options) int {
	if os.Getenv(SkipEnv) == "1" {
		fmt.Fprintf(os.Stderr, "testenv: %s=1: integration tests skipped, no control plane started\n", SkipEnv)
		return m.Run()
	}
	// Start-up takes 4-8 s; the bound only catches a wedged apiserver.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	e, err := StartWith(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "testenv: kube-apiserver %s up in %.1fs, kubeconfig %s\n",
		K8sVersion, e.StartupTime.Seconds(), e.Kubeconfig)
	*env = e
	// etcd and kube-apiserver run in their own process group, so an interrupt (Ctrl-C, a CI
	// cancel) reaches only this binary: stop them before exiting, or they outlive it.
	// A -timeout panic still leaves them running; their state is in /tmp/k8s_test_framework_*.
	var (
		stopOnce sync.Once
		stopErr  error
	)
	stop := func() error { stopOnce.Do(func() { stopErr = e.Stop() }); return stopErr }
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	finished := make(chan struct{})
	go func() {
		select {
		case <-sig:
			fmt.Fprintln(os.Stderr, "testenv: interrupted, stopping etcd and kube-apiserver")
			_ = stop()
			os.Exit(130)
		case <-finished:
		}
	}()
	code := m.Run()
	close(finished)
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Require returns e for a test that needs the control plane. It skips the test only when
// ORK_SKIP_INTEGRATION=1; a nil e otherwise means TestMain did not call Main, and fails.
func (e *Env) Require(t testing.TB) *Env {
	t.Helper()
	if e != nil {
		return e
	}
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("%s=1: needs kube-apiserver", SkipEnv)
	}
	t.Fatal("testenv: no control plane: call testenv.Main from TestMain")
	return nil
}

var nameUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a uniquely named namespace for t, derived from the test's name. Cleanup
// deletes it; without kube-controller-manager it stays Terminating, which is harmless.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	prefix := strings.Trim(nameUnsafe.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(prefix) > 40 { // keep both ends: the test and the subtest
		prefix = strings.TrimRight(prefix[:20], "-") + "-" + strings.TrimLeft(prefix[len(prefix)-19:], "-")
	}
	ns, err := e.Clientset.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("testenv: create namespace: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled in Cleanup.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.Clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("testenv: delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// ServiceAccountConfig is a copy of Config that impersonates the ServiceAccount
// namespace/name, with the groups a real token of it carries.
func (e *Env) ServiceAccountConfig(namespace, name string) *rest.Config {
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return cfg
}

// Kubectl runs the built kubectl against the control plane with stdin (may be nil) and
// returns its stdout; a failure fails t with stderr.
func (e *Env) Kubectl(t testing.TB, stdin []byte, args ...string) string {
	t.Helper()
	bin := filepath.Join(e.BinDir, "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("testenv: kubectl not found in %s: run `make k8s-bin`", e.BinDir)
	}
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
