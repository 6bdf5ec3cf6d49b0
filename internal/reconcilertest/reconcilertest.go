// Package reconcilertest builds and starts the example remote reconcilers of
// examples/remote on loopback, for tests of the commands that call them.
package reconcilertest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"
)

// Examples is the examples/remote directory relative to a package two levels below the
// repository root (internal/<pkg>), where go test runs.
const Examples = "../../examples/remote"

// Token is the token of examples/remote/secret.yaml, the one the examples expect.
func Token(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Examples, "secret.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		StringData map[string]string `json:"stringData"`
	}
	if err := sigsyaml.Unmarshal(data, &s); err != nil || s.StringData["token"] == "" {
		t.Fatalf("examples/remote/secret.yaml: no stringData.token (%v)", err)
	}
	return s.StringData["token"]
}

// BuildGo builds the Go example into a temporary directory and returns the binary. Build
// before picking a port, so that the port is not free for the whole build for someone else
// to take.
func BuildGo(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go toolchain not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "reconciler-go")
	build := exec.Command(goBin, "build", "-o", bin, "./examples/remote/reconciler-go")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// StartGo runs a binary from BuildGo on a loopback port and returns its endpoint URL.
func StartGo(t testing.TB, bin, token string) string {
	t.Helper()
	addr := freeAddr(t)
	start(t, token, addr, bin, "-addr", addr)
	return "http://" + addr + "/reconcile"
}

// StartPython runs the Python example on a loopback port and returns its endpoint URL; the
// test is skipped when python3 is not on PATH.
func StartPython(t testing.TB, token string) string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the Python example reconciler cannot run")
	}
	addr := freeAddr(t)
	start(t, token, addr, python, filepath.Join(Examples, "reconciler-python", "reconciler.py"), "--addr", addr)
	return "http://" + addr + "/reconcile"
}

// process is a started reconciler; its stderr is read only once it has exited.
type process struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	exited chan struct{}
}

// start runs name with RECONCILER_TOKEN set, waits until it listens on addr, and kills it
// when the test ends.
func start(t testing.TB, token, addr, name string, args ...string) {
	t.Helper()
	p := &process{cmd: exec.Command(name, args...), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "RECONCILER_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.stop)
	p.waitListening(t, addr)
}

func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// waitListening polls until addr accepts a connection: the reconcilers have no readiness
// signal but their port. The poll is bounded by a deadline and ends early if the process
// exits (a bad flag, a port taken).
func (p *process) waitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = conn.Close()
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before listening on %s:\n%s", p.cmd.Path, addr, p.stderr.String())
		case <-deadline.C:
			p.stop()
			t.Fatalf("%s not listening on %s after 30s:\n%s", p.cmd.Path, addr, p.stderr.String())
		case <-tick.C:
		}
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago. Another
// process could take it before the reconciler binds it; start then fails loudly.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
