package testkit_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/testkit"
)

// Eventually keeps polling through ordinary errors until the condition holds.
func TestEventuallyPollsThroughErrors(t *testing.T) {
	n := 0
	testkit.Eventually(t, "the third poll", time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		n++
		if n < 3 {
			return false, errors.New("not yet")
		}
		return true, nil
	})
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

// A Permanent error stops the poll at once, failing the test, long before the timeout.
func TestEventuallyStopsOnPermanent(t *testing.T) {
	polls := 0
	ft := &failRecorder{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testkit.Eventually(ft, "never", time.Millisecond, time.Hour, func(context.Context) (bool, error) {
			polls++
			return false, testkit.Permanent(errors.New("process exited"))
		})
	}()
	<-done
	if !ft.failed || polls != 1 {
		t.Fatalf("failed %v after %d polls; want a failure after 1", ft.failed, polls)
	}
}

// failRecorder turns Fatalf into a recorded failure that ends only the polling goroutine.
type failRecorder struct {
	*testing.T
	failed bool
}

func (f *failRecorder) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit() // as t.Fatal ends the goroutine
}
