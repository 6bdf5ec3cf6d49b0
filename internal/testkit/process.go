package testkit

import (
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Process is a child process a test started. Its stdout and stderr go to Output unless the
// command set them; it is killed when the test ends, if it has not exited by then.
type Process struct {
	Cmd    *exec.Cmd
	Output *SyncBuffer
	exited chan struct{}
	err    error
}

// Start starts cmd and reaps it in the background; the test's cleanup kills it and waits.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Output: &SyncBuffer{}, exited: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.Output
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.Output
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.Kill)
	return p
}

// Exited is closed once the process has exited; Err is then its exit error.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is cmd.Wait's result; it is only meaningful once Exited is closed.
func (p *Process) Err() error {
	<-p.exited
	return p.err
}

// Kill kills the process, if it still runs, and waits until it has exited.
func (p *Process) Kill() {
	select {
	case <-p.exited:
	default:
		_ = p.Cmd.Process.Kill()
		<-p.exited
	}
}

// WaitListening polls until addr accepts a TCP connection, for processes whose only
// readiness signal is their port. It fails the test early if the process exits (a bad
// flag, a port taken), and after timeout, which only bounds a process that never listens.
func (p *Process) WaitListening(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
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
			t.Fatalf("%s exited before listening on %s:\n%s", p.Cmd.Path, addr, p.Output.String())
		case <-deadline.C:
			p.Kill()
			t.Fatalf("%s not listening on %s after %s:\n%s", p.Cmd.Path, addr, timeout, p.Output.String())
		case <-tick.C:
		}
	}
}

// Terminate sends SIGTERM and waits up to grace for the process to exit, as a kubelet
// would; past grace it kills it. inTime reports whether it exited within grace, err is its
// exit error.
func (p *Process) Terminate(grace time.Duration) (inTime bool, err error) {
	select {
	case <-p.exited:
		return true, p.err
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true, p.err
	case <-timer.C:
		p.Kill()
		return false, p.err
	}
}
