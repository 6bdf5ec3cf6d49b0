package cli

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/testkit"
)

// The reconcilers ork init writes speak ork's protocol: `ork remote check` passes against
// each, started as its README says (the token from a file, as in the cluster), and the
// scaffold validates with no finding.
func TestScaffoldedReconcilersPassRemoteCheck(t *testing.T) {
	for _, flavour := range []string{"go", "python"} {
		t.Run(flavour, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "op")
			if code, _, errOut := runOrk(t, "init", dir, "--remote", flavour, "--reconciler-namespace", "team-a"); code != 0 {
				t.Fatalf("ork init: exit %d: %s", code, errOut)
			}
			katalog := filepath.Join(dir, "katalog.yaml")
			if code, out, errOut := runOrk(t, "validate", "-f", katalog); code != 0 || out != "valid: 0 errors, 0 warnings\n" {
				t.Errorf("ork validate: exit %d\n%s%s", code, out, errOut)
			}
			url := startReconciler(t, flavour, filepath.Join(dir, "reconciler"))
			code, out, errOut := runOrk(t, "remote", "check", "-f", katalog, "--endpoint", url,
				"--secrets", filepath.Join(dir, "secret.yaml"), "--include-delete")
			if code != 0 || !strings.Contains(out, "conformant: ") || !strings.Contains(out, " 0 violations, 0 warnings") {
				t.Errorf("ork remote check: exit %d, want 0 and conformant with no warning:\n%s%s", code, out, errOut)
			}
			t.Logf("ork remote check:\n%s", out)
		})
	}
}

// startReconciler starts the reconciler in dir on a free loopback port, with the token
// secret.yaml holds in a file, and returns its /reconcile URL once /readyz answers.
func startReconciler(t *testing.T, flavour, dir string) string {
	t.Helper()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("change-me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	switch flavour {
	case "go":
		bin := filepath.Join(t.TempDir(), "reconciler")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = dir
		// Its own module: no workspace, no flags of ork's build, and the Go at hand.
		build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build of the reconciler: %v\n%s", err, out)
		}
		cmd = exec.Command(bin)
	case "python":
		python, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("no python3 on PATH")
		}
		cmd = exec.Command(python, filepath.Join(dir, "reconciler.py"))
	}
	addr := testkit.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	// The address deploy/reconciler.yaml gives, :PORT: every interface, as a pod needs.
	cmd.Env = append(os.Environ(), "RECONCILER_ADDR=:"+port, "RECONCILER_TOKEN_FILE="+token, "RECONCILER_TOKEN=")
	p := testkit.Start(t, cmd)
	logs := p.Output
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reconciler log:\n%s", logs.String())
		}
	})
	// Start-up is well under a second; the bound only stops a reconciler that never listens
	// from hanging the test.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				reachableOutsideLoopback(t, port)
				return "http://" + addr + "/reconcile"
			}
		}
		select {
		case <-p.Exited():
			t.Fatalf("the reconciler exited: %v\n%s", p.Err(), logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reconciler is not ready on %s after 30s (last: %v)\n%s", addr, err, logs.String())
		}
	}
}

// reachableOutsideLoopback checks /healthz on port through this host's first non-loopback
// IPv4 address, where it has one: the Service and the kubelet's probes reach a pod there.
func reachableOutsideLoopback(t *testing.T, port string) {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.To4() == nil || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		url := "http://" + net.JoinHostPort(ipn.IP.String(), port) + "/healthz"
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("the reconciler listens on loopback only: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", url, resp.Status)
		}
		t.Logf("reachable at %s", url)
		return
	}
	t.Log("no non-loopback IPv4 address here: listening on every interface not checked")
}
