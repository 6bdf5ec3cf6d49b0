package liveness

import (
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// fakeClock is the liveness clock of a test: it moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestLivenessFailsOnlyForWhatARestartCures drives one queue with an injected clock: the
// bounds are minutes, the test waits for none of them.
func TestLivenessFailsOnlyForWhatARestartCures(t *testing.T) {
	const timeout = 10 * time.Second
	type world struct {
		clock  *fakeClock
		q      workqueue.TypedRateLimitingInterface[string]
		paused bool
	}
	// take is a worker taking the next key (the queue has one ready, so Get returns at once).
	take := func(w *world) string { k, _ := w.q.Get(); return k }
	tests := []struct {
		name    string
		workers int
		steps   func(w *world)
		want    string // a substring of the failure; "" for healthy
	}{
		{name: "a pass within its timeout plus 2 minutes", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			take(w)
			w.clock.add(timeout + stuckGrace)
		}},
		{name: "a pass past its timeout plus 2 minutes", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			take(w)
			w.clock.add(timeout + stuckGrace + time.Second)
		}, want: "inside the pass of ns/a"},
		{name: "a key ready, a worker free, none taken for 2 minutes", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			w.q.Done(take(w))
			w.q.Add("ns/b")
			w.clock.add(stallAfter + time.Second)
		}, want: "1 key(s) ready and no worker took one"},
		{name: "a key ready for exactly 2 minutes", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			w.q.Done(take(w))
			w.q.Add("ns/b")
			w.clock.add(stallAfter)
		}},
		{name: "a key ready past 2 minutes while a Retry-After pause holds", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			w.q.Done(take(w))
			w.q.Add("ns/b")
			w.paused = true
			w.clock.add(stallAfter + time.Minute)
		}},
		{name: "keys wait while every worker is in a pass within its bound", workers: 1, steps: func(w *world) {
			w.q.Add("ns/a")
			take(w)
			w.q.Add("ns/b")
			w.clock.add(stallAfter + time.Second)
		}},
		{name: "keys queued while the caches sync (the apiserver unreachable at start)", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			w.clock.add(10 * time.Minute)
		}},
		{name: "every key in backoff (the apiserver or the endpoint unreachable)", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			k := take(w)
			w.q.AddAfter(k, time.Hour) // the rate limiter's delay: not ready
			w.q.Done(k)
			w.clock.add(10 * time.Minute)
		}},
		{name: "a stalled queue that was shut down (a stop, a lost Lease)", workers: 2, steps: func(w *world) {
			w.q.Add("ns/a")
			w.q.Done(take(w))
			w.q.Add("ns/b")
			w.q.ShutDown()
			w.clock.add(10 * time.Minute)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{clock: &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}
			l := New(w.clock.now, func(time.Time) bool { return w.paused })
			w.q = l.Watch("app", tt.workers, timeout, workqueue.NewTypedRateLimitingQueue(
				workqueue.DefaultTypedControllerRateLimiter[string]()))
			t.Cleanup(w.q.ShutDown)
			tt.steps(w)
			err := l.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check = %v, want healthy", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("check = %v, want a failure saying %q", err, tt.want)
			}
		})
	}
}
