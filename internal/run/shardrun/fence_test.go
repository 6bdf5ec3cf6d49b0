package shardrun_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/testkit"
)

// waitLog waits until p has logged substr (bounded: a Manager round or an election retry
// logs within a retry period; slack for the loaded machine).
func (p *orkProcess) waitLog(t *testing.T, substr string) {
	t.Helper()
	testkit.Eventually(t, p.pod+" logs "+substr, 50*time.Millisecond, slack, func(context.Context) (bool, error) {
		return strings.Contains(p.logs.String(), substr), nil
	})
}

// setAll writes spec.v = v on every widget of want and records it there.
func (f *fixture) setAll(want map[string]string, v string) {
	f.t.Helper()
	for name := range want {
		f.setV(name, v)
		want[name] = v
	}
}

// callers counts the calls whose object had spec.v = v, by replica.
func (f *fixture) callers(v string) map[string]int {
	out := map[string]int{}
	for _, c := range callsWith(f.ep, v) {
		out[c.Header.Get(replicaHeader)]++
	}
	return out
}

// Mode fencing: a sharded replica started next to a single leader takes no bucket and makes
// no call while the leader's Lease lives; once the leader stops it takes every bucket; a
// single-leader replica started next to the ring never leads while the bucket Leases live.
func TestModeFencingNeverRunsBothModes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const b = 4
	want := map[string]string{}
	for _, cr := range f.create(20, "1") {
		want[cr.GetName()] = "1"
	}
	solo := f.start("solo", "--leader-elect", "--endpoint", f.via("solo"))
	f.waitConverged("the single leader reconciles every widget", leaseDuration+slack, want)

	ring := f.sharded("s0", b, "--endpoint", f.via("s0"))
	ring.waitLog(t, "mode fencing changed") // its Manager runs, and sees the leader's Lease
	f.setAll(want, "2")
	f.waitConverged("the leader reconciles the changes", slack, want)
	if got := f.callers("2"); got["s0"] > 0 || got["solo"] == 0 {
		t.Fatalf("calls by replica while the leader leads: %v (want the leader's only)", got)
	}
	if h, err := f.holders(t.Context(), b); err != nil || len(h) > 0 {
		t.Fatalf("bucket Leases held while the leader leads: %v (%v)", h, err)
	}

	// SIGTERM: the leader drains and releases its Lease; the ring's next round takes over.
	if err := solo.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-solo.Exited()
	f.settled(leaseDuration+slack, b, "s0")
	f.setAll(want, "3")
	f.waitConverged("the ring reconciles after the leader stopped", slack, want)

	// A single-leader replica next to the live ring stands by: the fence refuses its
	// acquisition while a bucket Lease lives.
	late := f.start("late", "--leader-elect", "--endpoint", f.via("late"))
	late.waitLog(t, "still hold bucket Leases")
	f.setAll(want, "4")
	f.waitConverged("the ring reconciles next to a fenced leader", slack, want)
	if got := f.callers("4"); got["late"] > 0 || got["s0"] == 0 {
		t.Fatalf("calls by replica next to the ring: %v (want the ring's only)", got)
	}
	if got := f.callers("3"); got["solo"] > 0 {
		t.Fatalf("the stopped leader called after its stop: %v", got)
	}
}
