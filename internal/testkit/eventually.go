package testkit

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually polls cond every interval until it holds, failing the test after timeout. An
// error from cond does not stop the poll (the apiserver may not have caught up yet) unless
// it is Permanent; the last one is reported on timeout. Callers choose a timeout that only
// catches what never happens, well above the time the condition takes on a loaded 2-core
// machine.
func Eventually(t testing.TB, what string, interval, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		var p permanent
		if errors.As(err, &p) {
			return false, p.err
		}
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// Permanent marks an error of Eventually's condition that no further waiting can cure
// (the process under test exited): the poll stops and the test fails at once.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }
