package run_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// requestClock records when each request of the engine left, below client-go's limiter.
type requestClock struct {
	mu sync.Mutex
	at []time.Time
}

func (r *requestClock) config(cfg *rest.Config, qps float32, burst int) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.QPS, out.Burst = qps, burst // as ork run sets them from --kube-api-qps and --kube-api-burst
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			r.record()
			return rt.RoundTrip(req)
		})
	})
	return out
}

// record notes a request leaving now.
func (r *requestClock) record() {
	r.mu.Lock()
	r.at = append(r.at, time.Now())
	r.mu.Unlock()
}

// count is how many requests left so far.
func (r *requestClock) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

// overSince is the most requests recorded by some time t beyond what a limiter of qps and
// burst made after start lets go by t (burst + qps × (t − start)): over 0 means the limit
// was broken. Unlike worst, it needs no slack for late timestamps: a request recorded by t
// left its limiter between start and t, however long it took to get from there to the
// recorder, so a slow machine only makes the bound looser.
func (r *requestClock) overSince(start time.Time, qps float64, burst int) (over int, when string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := slices.Clone(r.at)
	slices.SortFunc(at, time.Time.Compare) // concurrent requests may be appended out of order
	for i, t := range at {
		d := t.Sub(start)
		if excess := int(float64(i+1) - (float64(burst) + qps*d.Seconds())); excess > over {
			over, when = excess, fmt.Sprintf("%d requests %v after the start", i+1, d.Round(time.Millisecond))
		}
	}
	return over, when
}

// worst is the window in which the most requests left beyond what a limiter of qps and
// burst allows (qps × window + burst, plus slack): over 0 means the limit was broken.
func (r *requestClock) worst(qps float64, burst int, slack time.Duration) (over int, window string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.at {
		for j := i; j < len(r.at); j++ {
			d := r.at[j].Sub(r.at[i])
			allowed := float64(burst) + qps*(d+slack).Seconds()
			if n := j - i + 1; float64(n)-allowed > float64(over) {
				over, window = int(float64(n)-allowed), fmt.Sprintf("%d requests in %v", n, d.Round(time.Millisecond))
			}
		}
	}
	return over, window
}

// --kube-api-qps binds the engine's requests to the apiserver: in any window, at most
// qps × window + burst left. The same start over the same CRs without the flag goes past
// that bound: the CRs are there before the start and 8 workers take them at once, so the
// load is the apiserver's pace at about 150 requests, not one pass at a time (with 10 CRs
// created after the start and 2 workers, a loaded machine once kept the unlimited run under
// 20/s + 20).
func TestKubeAPIQPSBindsTheEngine(t *testing.T) {
	t.Parallel()
	const qps, burst, crs = 20, 20, 30
	// Slack: the time is taken after the limiter let the request go; on a loaded 2-core
	// machine a goroutine may wait up to ~half a second to run, which can make an earlier
	// request look later and a window look shorter by that much.
	const slack = 500 * time.Millisecond
	for _, limited := range []bool{true, false} {
		t.Run(fmt.Sprintf("limited=%v", limited), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
			clock := &requestClock{}
			cfg := clock.config(env.Config, qps, burst)
			if !limited { // ork's default: no client-side limit
				cfg = clock.config(env.Config, run.NoClientRateLimit, 0)
			}
			for i := range crs {
				f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
			}
			f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
			f.Start(f.withWorkers(8), cfg)
			for i := range crs {
				f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
			}
			over, window := clock.worst(qps, burst, slack)
			t.Logf("%d requests; the worst window: %s, %d beyond %d/s + %d", clock.count(), window, over, qps, burst)
			switch {
			case limited && over > 0:
				t.Errorf("with --kube-api-qps=%d --kube-api-burst=%d: %s, %d beyond the limit", qps, burst, window, over)
			case !limited && over == 0:
				t.Errorf("without the flag no window went past %d/s + %d: the test's load cannot show the limit binding", qps, burst)
			}
		})
	}
}
