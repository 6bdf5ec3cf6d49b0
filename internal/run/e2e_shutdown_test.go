package run_test

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testkit"
)

// 15. SIGTERM to the ork binary while a slow reconcile is in flight: the reconcile
// completes (children applied, status written) and ork exits 0.
func TestSIGTERMDrainsInFlightReconcile(t *testing.T) {
	// Built before t.Parallel: while sequential tests run the parallel ones wait, so the
	// build does not take the CPU from their reconciles and deadlines.
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)

	started, release := make(chan struct{}), make(chan struct{})
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.Trigger == "create" {
			close(started)
			select { // the test may fail before it releases the call
			case <-release:
			case <-c.Ctx.Done():
			}
		}
		return runtest.OKWithChildren(c)
	})
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "1m"})

	cmd := exec.Command(bin, "run", "-f", f.Katalog, "--kubeconfig", env.Kubeconfig, "--namespace", f.NS,
		"--health-addr=", "--metrics-addr=", "--shutdown-timeout=30s")
	stderr := testkit.NewLineWriter(f.Logs, 100)
	cmd.Stderr = stderr
	p := testkit.Start(t, cmd)
	waitLine := func(substr string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l := <-stderr.Lines:
				if strings.Contains(l, substr) {
					return
				}
			case <-p.Exited():
				// Its last lines may still be unread: the exit is only final once they are.
				for {
					select {
					case l := <-stderr.Lines:
						if strings.Contains(l, substr) {
							return
						}
						continue
					default:
					}
					t.Fatalf("ork exited before logging %q:\n%s", substr, f.Logs.String())
				}
			case <-deadline:
				t.Fatalf("ork did not log %q within 30s:\n%s", substr, f.Logs.String())
			}
		}
	}
	waitLine("ork is running")
	f.CreateCR("web", map[string]any{})
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the reconcile never reached the endpoint")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLine("shutting down")
	close(release)
	if err := p.Err(); err != nil {
		t.Fatalf("ork exited with %v after SIGTERM, want exit 0:\n%s", err, f.Logs.String())
	}
	got := f.GetCR("web")
	if c := runtest.ReadyCondition(got); c == nil || c["status"] != "True" {
		t.Errorf("Ready condition after the drained reconcile = %v, want True", c)
	}
	if _, err := f.Get(runtest.Deployments, "web"); err != nil {
		t.Errorf("the in-flight reconcile's deployment was not applied: %v", err)
	}
}
