package wireschema

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// process is a reconciler started by a test; its stderr is read only once it has exited.
type process struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	exited chan struct{}
}

// buildGoReconciler builds the Go example; build it before picking a port, so that the
// port is not free for the whole build for someone else to take.
func buildGoReconciler(t *testing.T) string {
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

func startPythonReconciler(t *testing.T, addr, token string) *process {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the Python example reconciler cannot run")
	}
	return start(t, token, addr, python, filepath.Join(examplesDir, "reconciler-python", "reconciler.py"), "--addr", addr)
}

// start runs name with RECONCILER_TOKEN set, waits until it listens on addr, and kills it
// when the test ends.
func start(t *testing.T, token, addr, name string, args ...string) *process {
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
	return p
}

func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// waitListening polls until addr accepts a connection: the reconcilers have no readiness
// signal but their port. The poll is bounded by a deadline and ends early if the process
// exits (a bad flag, a port taken).
func (p *process) waitListening(t *testing.T, addr string) {
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
func freeAddr(t *testing.T) string {
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
