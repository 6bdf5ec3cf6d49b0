package shardrun_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// gatedVia is via whose calls wait, while held is set, until gate closes; waiting counts
// them.
func (f *fixture) gatedVia(pod string, held *atomic.Bool, gate chan struct{}, waiting *atomic.Int32) string {
	target, err := url.Parse(f.ep.URL())
	if err != nil {
		f.t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Header.Set(replicaHeader, pod)
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if held.Load() {
			waiting.Add(1)
			<-gate
		}
		p.ServeHTTP(w, r)
	}))
	f.t.Cleanup(srv.Close)
	f.t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})
	return srv.URL
}

// A replica frozen (SIGSTOP) past its Leases with a call in flight: the other replica takes
// its buckets and converges their CRs; thawed, the frozen one writes nothing of its late
// answer (its guard finds the bucket's renewal past the deadline) and its buckets are
// reported lost, not taken back by force.
func TestFrozenReplicaWritesNothingForTheBucketsItLost(t *testing.T) {
	t.Parallel()
	// The held call must outlive the freeze: its answer arrives after the thaw.
	f := newFixtureTimeout(t, "2m")
	const b, n = 4, 16
	want := map[string]string{}
	crs := f.create(n, "1")
	for _, cr := range crs {
		want[cr.GetName()] = "1"
	}
	held, gate, waiting := &atomic.Bool{}, make(chan struct{}), &atomic.Int32{}
	frozen := f.sharded("a", b, "--endpoint", f.gatedVia("a", held, gate, waiting))
	f.sharded("c", b, "--endpoint", f.via("c"))
	f.waitConverged("every widget reconciled", leaseDuration+slack, want)
	holders := f.settled(leaseDuration+slack, b, "a", "c")

	// One of a's CRs changes; a's call for it is held at its proxy.
	var victim *unstructured.Unstructured
	for _, cr := range crs {
		if holders[shard.BucketOf(cr.GetUID(), b)] == "a" {
			victim = cr
			break
		}
	}
	if victim == nil {
		t.Fatalf("a holds no widget's bucket: %v", holders)
	}
	held.Store(true)
	f.setV(victim.GetName(), "late")
	testkit.Eventually(t, "a's call held", 20*time.Millisecond, slack, func(context.Context) (bool, error) {
		return waiting.Load() == 1, nil
	})
	if err := frozen.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// c takes every bucket once a's Leases expire, and passes their CRs.
	f.settled(leaseDuration+2*jitteredRetry*2+slack, b, "c")
	f.setAll(want, "new")
	f.waitConverged("c reconciles every widget", slack, want)
	rvs := map[string]string{}
	for name := range want {
		rvs[name] = f.rv(name)
	}

	close(gate)                                                        // a's held call is answered "late"...
	if err := frozen.Cmd.Process.Signal(syscall.SIGCONT); err != nil { // ...and a runs again
		t.Fatal(err)
	}
	frozen.waitLog(t, "bucket lost")
	// a's next round also rejoins the ring: wait until it takes a bucket again, so that its
	// late pass has long ended, then look.
	testkit.Eventually(t, "a takes part again", 50*time.Millisecond, leaseDuration+slack, func(context.Context) (bool, error) {
		return strings.Count(frozen.logs.String(), "shard bucket taken") > len(holdersOf(holders, "a")), nil
	})
	f.settled(leaseDuration+slack, b, "a", "c")
	left, err := f.unconverged(t.Context(), want)
	if err != nil || len(left) > 0 {
		t.Fatalf("after a thawed, not as c left them: %v (%v)", left, err)
	}
	cm, err := env.Clientset.CoreV1().ConfigMaps(f.ns).Get(t.Context(), victim.GetName(), metav1.GetOptions{})
	if err != nil || cm.Data["v"] != "new" {
		t.Fatalf("ConfigMap %s after a thawed: %v (%v), want data.v new", victim.GetName(), cm.Data, err)
	}
	for name, rv := range rvs {
		if now := f.rv(name); now != rv {
			t.Errorf("%s written after c converged (resourceVersion %s, then %s)", name, rv, now)
		}
	}
}

func holdersOf(holders map[int]string, pod string) []int {
	var out []int
	for i, p := range holders {
		if p == pod {
			out = append(out, i)
		}
	}
	return out
}

// rv is the named widget's resourceVersion.
func (f *fixture) rv(name string) string {
	f.t.Helper()
	w, err := f.dyn.Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return w.GetResourceVersion()
}
