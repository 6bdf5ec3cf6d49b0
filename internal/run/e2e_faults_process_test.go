package run_test

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run/runtest"
)

// gatedEndpoint holds every call until the test opens its gate, answering with a tag the
// test chooses per phase; it counts the calls waiting.
type gatedEndpoint struct {
	*endpoint
	waiting atomic.Int32
	mu      sync.Mutex
	gate    chan struct{}
	tag     string
}

func newGatedEndpoint(t *testing.T) *gatedEndpoint {
	g := &gatedEndpoint{gate: make(chan struct{}), tag: "first"}
	g.endpoint = runtest.NewEndpoint(t, func(c call) response {
		g.mu.Lock()
		gate, tag := g.gate, g.tag
		g.mu.Unlock()
		g.waiting.Add(1)
		select {
		case <-gate:
		case <-c.Ctx.Done():
		}
		g.waiting.Add(-1)
		name := c.CRName()
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"by": tag}, "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": tag}},
		}})
	})
	return g
}

// next makes later calls wait on a new gate and answer with tag; it returns the old gate.
func (g *gatedEndpoint) next(tag string, open bool) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.gate
	g.gate, g.tag = make(chan struct{}), tag
	if open {
		close(g.gate)
	}
	return old
}

// waitCallsHeld waits until n calls wait at the gate (bounded: calls arrive within ms).
func (g *gatedEndpoint) waitCallsHeld(t *testing.T, f *fixture, n int32) {
	t.Helper()
	f.Eventually(fmt.Sprintf("%d calls held", n), func() (bool, error) { return g.waiting.Load() >= n, nil })
}

func (f *fixture) crsWith(t *testing.T, names []string, by string) {
	t.Helper()
	for _, name := range names {
		f.Eventually(name+" reconciled by "+by, func() (bool, error) {
			cr := f.GetCR(name)
			got, _, _ := unstructured.NestedString(cr.Object, "status", "by")
			d, err := f.Get(runtest.Deployments, name)
			return got == by && err == nil && image(d) == by, nil
		})
	}
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("cr-%d", i)
	}
	return out
}

// 12.11 ork killed with SIGKILL in the middle of reconciles, then started again: every CR
// converges (nothing of the killed run is needed to finish the work).
func TestFaultKilledMidReconcile(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	g := newGatedEndpoint(t)
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: g.URL(), Timeout: "2m"})
	first := startOrk(t, f, bin)
	first.waitLine(t, f, "ork is running")
	crs := names(6)
	for _, name := range crs {
		f.CreateCR(name, map[string]any{})
	}
	g.waitCallsHeld(t, f, 2)
	if err := first.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.Exited()
	close(g.next("second", true)) // the killed run's calls end; the new run's pass at once
	second := startOrk(t, f, bin)
	second.waitLine(t, f, "ork is running")
	f.crsWith(t, crs, "second")
}

// 12.12 Leader hand-over under load: the leader is frozen (SIGSTOP) with calls in flight and
// CRs still to do; the standby takes over and finishes every CR; the old leader, running
// again, writes none of its late answers and exits non-zero.
func TestFaultLeaderHandOverUnderLoad(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	g := newGatedEndpoint(t)
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: g.URL(), Timeout: "2m"})
	lease := leaseFlags("handover")
	leader := startOrk(t, f, bin, lease...)
	leader.waitLine(t, f, "ork is running")
	standby := startOrk(t, f, bin, lease...)
	standby.waitLine(t, f, "Attempting to acquire leader lease")
	crs := names(12)
	for _, name := range crs {
		f.CreateCR(name, map[string]any{})
	}
	g.waitCallsHeld(t, f, 2) // workers: 2, both held
	if err := leader.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stale := g.next("fresh", true) // the standby's calls answer at once
	f.crsWith(t, crs, "fresh")
	converged := f.resourceVersions(t, crs)
	close(stale)                                                       // the frozen leader's calls are answered "stale"...
	if err := leader.Cmd.Process.Signal(syscall.SIGCONT); err != nil { // ...and it runs again
		t.Fatal(err)
	}
	select {
	case <-leader.Exited():
		err := leader.Err()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("the old leader exited with %v, want non-zero", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the old leader still runs a minute after losing its Lease")
	}
	f.unchangedSince(t, converged)
	for _, name := range crs {
		by, _, _ := unstructured.NestedString(f.GetCR(name).Object, "status", "by")
		d, err := f.Get(runtest.Deployments, name)
		if by != "fresh" || err != nil || image(d) != "fresh" {
			t.Errorf("%s: status.by %q, image %q (%v): the old leader wrote after losing the Lease", name, by, image(d), err)
		}
	}
}
