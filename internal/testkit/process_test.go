package testkit_test

import (
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/testkit"
)

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not on PATH", name)
	}
	return p
}

// SIGTERM ends a process that does not ignore it, within grace; one that ignores it is
// killed once grace has passed.
func TestProcessTerminate(t *testing.T) {
	sleep := lookPath(t, "sleep")
	p := testkit.Start(t, exec.Command(sleep, "60"))
	// 30 s only bounds a process that ignores SIGTERM; sleep exits on it at once.
	inTime, err := p.Terminate(30 * time.Second)
	var exit *exec.ExitError
	if !inTime || !errors.As(err, &exit) {
		t.Errorf("sleep after SIGTERM: in time %v, err %v; want in time with a signal exit", inTime, err)
	}

	sh := lookPath(t, "sh")
	cmd := exec.Command(sh, "-c", `trap "" TERM; echo ready; exec `+sleep+" 60")
	out := testkit.NewLineWriter(&testkit.SyncBuffer{}, 1)
	cmd.Stdout = out
	stubborn := testkit.Start(t, cmd)
	<-out.Lines // SIGTERM is ignored from here on (the test's timeout bounds a shell that never says so)
	if inTime, _ := stubborn.Terminate(200 * time.Millisecond); inTime {
		t.Error("a process ignoring SIGTERM exited within grace")
	}
	select {
	case <-stubborn.Exited():
	default:
		t.Error("a process past its grace still runs")
	}
}

// WaitListening fails at once, with the process's output, when it exits before listening.
func TestWaitListeningFailsWhenTheProcessExits(t *testing.T) {
	sh := lookPath(t, "sh")
	p := testkit.Start(t, exec.Command(sh, "-c", "echo bad flag >&2; exit 2"))
	ft := &failRecorder{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// An hour: only the exit can end the wait in time for the test.
		p.WaitListening(ft, testkit.FreeAddr(t), time.Hour)
	}()
	<-done
	if !ft.failed {
		t.Fatal("WaitListening returned for a process that exited without listening")
	}
	if got := p.Output.String(); got != "bad flag\n" {
		t.Errorf("output = %q, want the process's stderr", got)
	}
}
