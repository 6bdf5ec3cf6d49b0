package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartControllerManager runs kube-controller-manager's controllers (default: only the
// garbage collector) against the control plane until t ends (or Stop, whichever comes
// first). The garbage collector learns resource types when it starts and then only every
// 30 s, so install the CRDs t needs first. Other tests share the cluster and expect, for
// example, namespaces to stay Terminating and no ReplicaSets to appear: a test that runs the
// deployment controller must not run in parallel with them.
func (e *Env) StartControllerManager(t testing.TB, controllers ...string) {
	t.Helper()
	bin := filepath.Join(e.BinDir, "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("testenv: kube-controller-manager not found in %s: run `make k8s-bin`", e.BinDir)
	}
	if len(controllers) == 0 {
		controllers = []string{"garbagecollector"}
	}
	dir := t.TempDir()
	var logs bytes.Buffer
	cmd := exec.Command(bin,
		"--kubeconfig", e.Kubeconfig,
		"--authentication-kubeconfig", e.Kubeconfig,
		"--authorization-kubeconfig", e.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false",
		"--controllers="+strings.Join(controllers, ","),
		// Otherwise it creates a plugin directory under /usr/libexec on the host.
		"--flex-volume-plugin-dir", filepath.Join(dir, "flexvolume"),
	)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start kube-controller-manager: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	e.onStop(stop)
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("kube-controller-manager log:\n%s", tail(logs.Bytes(), 4096))
		}
	})
}

// onStop registers f to run on Stop, before the control plane stops: processes a test
// started must not outlive an interrupted run.
func (e *Env) onStop(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stops = append(e.stops, f)
}

func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	if i := bytes.IndexByte(b[len(b)-n:], '\n'); i >= 0 {
		return b[len(b)-n+i+1:]
	}
	return b[len(b)-n:]
}
