// Package reconcilertest gives tests remote reconcilers on loopback: the examples of
// examples/remote, built and started, and a scripted Endpoint that records every call
// (trigger, start, end) and every overlap of two calls for one key.
package reconcilertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/testkit"
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

// BuildGo builds the Go example with bins (once per test binary) and returns the binary.
// Build before picking a port, so that the port is not free for the whole build for
// someone else to take.
func BuildGo(t testing.TB, bins *testkit.Binaries) string {
	t.Helper()
	return bins.Build(t, "./examples/remote/reconciler-go")
}

// StartGo runs a binary from BuildGo on a loopback port and returns its endpoint URL.
func StartGo(t testing.TB, bin, token string) string {
	t.Helper()
	addr := testkit.FreeAddr(t)
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
	addr := testkit.FreeAddr(t)
	start(t, token, addr, python, filepath.Join(Examples, "reconciler-python", "reconciler.py"), "--addr", addr)
	return "http://" + addr + "/reconcile"
}

// start runs name with RECONCILER_TOKEN set, waits until it listens on addr (30 s only
// bounds a reconciler that never listens), and kills it when the test ends.
func start(t testing.TB, token, addr, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "RECONCILER_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
	p := testkit.Start(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s:\n%s", name, p.Output.String())
		}
	})
	p.WaitListening(t, addr, 30*time.Second)
}
