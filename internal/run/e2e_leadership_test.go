package run_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testkit"
)

// A replica that stops releases its Lease at once (the standby need not wait for it to
// expire), and the default identity is <hostname>_<random>: two processes on one host never
// both lead.
func TestLeaseIsReleasedOnStopAndNamesAUniqueIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	eng := f.NewEngine(set, nil, func(o *run.Options) { o.LeaderElect, o.LeaseName = true, "ork-release" })
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	f.Eventually("leading and ready", func() (bool, error) { return eng.Ready(), nil })
	lease, err := env.Clientset.CoordinationV1().Leases(f.NS).Get(t.Context(), "ork-release", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if id := lease.Spec.HolderIdentity; id == nil || !regexp.MustCompile("^"+regexp.QuoteMeta(host)+"_[a-z0-9]{5,}$").MatchString(*id) {
		t.Errorf("Lease holder = %v, want <hostname>_<random>", id)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("stopped with %v", err)
	}
	lease, err = env.Clientset.CoordinationV1().Leases(f.NS).Get(t.Context(), "ork-release", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id := lease.Spec.HolderIdentity; id != nil && *id != "" {
		t.Errorf("Lease still held by %q after a clean stop, want it released", *id)
	}
}

// orkProcess is the ork binary running in the background, its stderr in f.logs and, line
// by line, in lines.
type orkProcess struct {
	*testkit.Process
	lines chan string
}

func startOrk(t *testing.T, f *fixture, bin string, args ...string) *orkProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"run", "-f", f.Katalog, "--kubeconfig", env.Kubeconfig, "--namespace", f.NS,
		"--health-addr=", "--metrics-addr="}, args...)...)
	stderr := testkit.NewLineWriter(f.Logs, 1000)
	cmd.Stderr = stderr
	p := &orkProcess{Process: testkit.Start(t, cmd), lines: stderr.Lines}
	// A test may end with the process stopped (SIGSTOP): SIGCONT before the kill, so that
	// it also releases what it holds.
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGCONT) })
	return p
}

// waitLine waits for a log line containing substr (bounded: ork logs within seconds).
func (p *orkProcess) waitLine(t *testing.T, f *fixture, substr string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, substr) {
				return
			}
		case <-deadline:
			t.Fatalf("ork did not log %q:\n%s", substr, f.Logs.String())
		}
	}
}

// 10.3 A leader frozen in the middle of a slow reconcile (SIGSTOP: a long GC pause, a
// throttled container) past its Lease writes nothing once it runs again: the standby has
// led since, and the old leader notices the lost Lease, skips the write and exits non-zero.
func TestFrozenLeaderWritesNothingAfterLosingTheLease(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	ep := runtest.NewEndpoint(t, func(c call) response {
		img := "fresh"
		if first.CompareAndSwap(false, true) { // the leader's first call: freeze it while it waits
			close(held)
			select {
			case <-release:
			case <-c.Ctx.Done():
			}
			img = "stale"
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"by": img}, "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": img}},
		}})
	})
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "2m"})
	lease := leaseFlags("frozen")
	leader := startOrk(t, f, bin, lease...)
	leader.waitLine(t, f, "ork is running")
	standby := startOrk(t, f, bin, lease...)
	standby.waitLine(t, f, "Attempting to acquire leader lease")

	f.CreateCR("web", map[string]any{})
	<-held
	if err := leader.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The standby takes over once the Lease expires and reconciles the CR itself.
	f.Eventually("the standby's reconcile", func() (bool, error) {
		by, _, _ := unstructured.NestedString(f.GetCR("web").Object, "status", "by")
		return by == "fresh", nil
	})
	f.crsWith(t, []string{"web"}, "fresh")
	converged := f.resourceVersions(t, []string{"web"})
	close(release)                                                     // the frozen leader's call is answered...
	if err := leader.Cmd.Process.Signal(syscall.SIGCONT); err != nil { // ...and it runs again
		t.Fatal(err)
	}
	select {
	case <-leader.Exited():
		err := leader.Err()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("the old leader exited with %v, want a non-zero exit after losing the Lease", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the old leader still runs a minute after losing its Lease")
	}
	f.unchangedSince(t, converged)
	if by, _, _ := unstructured.NestedString(f.GetCR("web").Object, "status", "by"); by != "fresh" {
		t.Errorf("status.by = %q: the old leader wrote after losing the Lease", by)
	}
	dep, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	if img := image(dep); img != "fresh" {
		t.Errorf("deployment image = %q: the old leader applied after losing the Lease", img)
	}
}

// Lease timings of the multi-process tests. The leader renews every retry period and loses
// its Lease only when no renewal succeeds for a whole renew deadline: 8 s of missed
// one-request renewals, which a loaded 2-core machine does not reach by accident (a renewal
// takes milliseconds there, a second at worst), while a SIGSTOP does. A standby takes over
// at most a lease duration plus a retry period after the freeze.
const (
	childLeaseDuration = 10 * time.Second
	childRenewDeadline = 8 * time.Second
	childRetryPeriod   = time.Second
)

// leaseFlags are ork run's leader-election flags with the timings above, on Lease name.
func leaseFlags(name string) []string {
	return []string{"--leader-elect", "--lease-name=" + name,
		"--leader-elect-lease-duration=" + childLeaseDuration.String(),
		"--leader-elect-renew-deadline=" + childRenewDeadline.String(),
		"--leader-elect-retry-period=" + childRetryPeriod.String()}
}

// resourceVersions records the resourceVersion of each named CR and of its Deployment.
func (f *fixture) resourceVersions(t *testing.T, crs []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range crs {
		out["cr "+name] = f.GetCR(name).GetResourceVersion()
		d, err := f.Get(runtest.Deployments, name)
		if err != nil {
			t.Fatal(err)
		}
		out["deployment "+name] = d.GetResourceVersion()
	}
	return out
}

// unchangedSince fails for every object whose resourceVersion moved since rvs: a write
// after the standby had converged.
func (f *fixture) unchangedSince(t *testing.T, rvs map[string]string) {
	t.Helper()
	var crs []string
	for k := range rvs {
		if name, ok := strings.CutPrefix(k, "cr "); ok {
			crs = append(crs, name)
		}
	}
	for k, now := range f.resourceVersions(t, crs) {
		if rvs[k] != now {
			t.Errorf("%s: resourceVersion %s after the old leader ran again, %s when the standby had converged: it was written", k, now, rvs[k])
		}
	}
}
