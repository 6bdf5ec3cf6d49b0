package shardrun_test

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A replica that loses its member Lease exits non-zero: frozen past it, while a new process
// of the same pod name (a StatefulSet's replacement) took it over, the old one, thawed,
// finds its member Lease held by another and stops at once. The new one reconciles.
func TestLosingTheMemberLeaseExitsNonZero(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const b = 2
	want := map[string]string{}
	for _, cr := range f.create(8, "1") {
		want[cr.GetName()] = "1"
	}
	old := f.sharded("p", b, "--endpoint", f.via("old"))
	f.waitConverged("the first process reconciles", leaseDuration+slack, want)
	f.settled(leaseDuration+slack, b, "p")
	if err := old.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	f.sharded("p", b, "--endpoint", f.via("new"))
	// The new process waits out the old one's member Lease, then takes the buckets.
	f.setAll(want, "2")
	f.waitConverged("the new process reconciles", leaseDuration+2*jitteredRetry*2+slack, want)
	if got := f.callers("2"); got["old"] > 0 {
		t.Fatalf("the frozen process called: %v", got)
	}
	if err := old.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.Exited():
		var exit *exec.ExitError
		if err := old.Err(); !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("the old process exited with %v, want non-zero", err)
		}
	case <-time.After(2*jitteredRetry + slack): // its next round renews the member Lease
		t.Fatal("the old process still runs after losing its member Lease")
	}
	old.waitLog(t, "lost the member Lease")
}
