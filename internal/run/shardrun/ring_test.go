package shardrun_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// replicaHeader names the replica whose call it is: each replica calls the one reconciler
// through a proxy of its own that sets it, so that the reconciler's record of overlapping
// calls spans every replica.
const replicaHeader = "X-Ork-Replica"

// via is a proxy to the fixture's reconciler that tags each call with pod.
func (f *fixture) via(pod string) string {
	target, err := url.Parse(f.ep.URL())
	if err != nil {
		f.t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Header.Set(replicaHeader, pod)
	}}
	srv := httptest.NewServer(p)
	f.t.Cleanup(srv.Close)
	return srv.URL
}

// settled waits until every bucket of b is held, each by one of pods, none above its fair
// share among them, and returns the holders.
func (f *fixture) settled(within time.Duration, b int, pods ...string) map[int]string {
	f.t.Helper()
	var got map[int]string
	testkit.Eventually(f.t, fmt.Sprintf("the %d buckets shared among %v", b, pods), 100*time.Millisecond, within, func(ctx context.Context) (bool, error) {
		var err error
		if got, err = f.holders(ctx, b); err != nil {
			return false, err
		}
		count := map[string]int{}
		for i := range b {
			if !slices.Contains(pods, got[i]) {
				return false, fmt.Errorf("bucket %d held by %q", i, got[i])
			}
			count[got[i]]++
		}
		for _, pod := range pods {
			if count[pod] == 0 || count[pod] > shard.FairShare(b, len(pods)) {
				return false, fmt.Errorf("holdings %v: want 1..%d each", count, shard.FairShare(b, len(pods)))
			}
		}
		return true, nil
	})
	return got
}

// callsWith lists the calls whose object had spec.v = v.
func callsWith(ep *reconcilertest.Endpoint, v string) []reconcilertest.Call {
	var out []reconcilertest.Call
	for _, c := range ep.Calls() {
		obj, _ := c.Body["object"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		if spec["v"] == v {
			out = append(out, c)
		}
	}
	return out
}

func uidOf(c reconcilertest.Call) types.UID {
	obj, _ := c.Body["object"].(map[string]any)
	md, _ := obj["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return types.UID(uid)
}

// issueLeases are the ring test's Lease times, those the issue names: client-go's default
// ratios at about half their length.
var issueLeases = leaseTimes{duration: 8 * time.Second, renew: 6 * time.Second, retry: time.Second}

// One ring of three replicas (Lease 8 s, renew deadline 6 s, retry 1 s, B = 16, 300 CRs), in
// sequence: it shares the buckets fairly, every CR converges, each CR is called only by the
// replica holding its bucket, and no two calls for one CR ever overlap; a replica frozen
// (SIGSTOP) past its Leases has its buckets taken, and thawed makes no call from its stale
// cache and no write; a replica killed with SIGKILL has its buckets taken by the others
// within the Lease's expiry, and the CRs of those buckets changed after the kill converge;
// a replica that joins under load gets its share, still with no overlapping call.
func TestRingSharesTheBucketsAndTakesOverAKilledReplica(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.leases = issueLeases
	lease, jittered := f.leases.duration, f.leases.jittered()
	const b, n = 16, 300
	want := map[string]string{}
	crs := f.create(n, "1")
	for _, cr := range crs {
		want[cr.GetName()] = "1"
	}
	pods := []string{"r0", "r1", "r2"}
	reps := map[string]*orkProcess{}
	for _, pod := range pods {
		reps[pod] = f.sharded(pod, b, "--endpoint", f.via(pod))
	}
	// Start-up: three processes listing, each waiting one retry period for its peers
	// before its first take; slack covers the loaded machine.
	f.waitConverged("every widget reconciled by the ring", 2*lease+slack, want)
	holders := f.settled(lease+slack, b, pods...)
	f.takeEvents(b)

	// The settled ring: each CR's call comes from its bucket's holder, and only from it.
	f.setAll(want, "2")
	f.waitConverged("every widget changed, reconciled again", slack, want)
	if now := f.settled(time.Second, b, pods...); !maps.Equal(now, holders) {
		t.Fatalf("the buckets moved while the ring was settled: %v, then %v", holders, now)
	}
	for _, c := range callsWith(f.ep, "2") {
		if by, owner := c.Header.Get(replicaHeader), holders[shard.BucketOf(uidOf(c), b)]; by != owner {
			t.Errorf("%s (bucket %d) called by %s, held by %s", c.Key, shard.BucketOf(uidOf(c), b), by, owner)
		}
	}

	// SIGSTOP r1 past its Leases; its CRs change meanwhile and r0 and r2 converge them.
	frozen := reps["r1"]
	if err := frozen.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	f.settled(lease+2*jittered*2+slack, b, "r0", "r2")
	changed := f.setBuckets(crs, holdersOf(holders, "r1"), b, want, "3")
	f.waitConverged("the frozen replica's widgets, by the others", slack, want)
	rvs := map[string]string{}
	for name := range want {
		rvs[name] = f.rv(name)
	}
	thawed := len(f.ep.Calls())
	if err := frozen.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	frozen.waitLog(t, "bucket lost")
	// r1 rejoins the ring (its member Lease was never taken): the others hand buckets
	// back to it, and it passes their CRs with a fresh cache.
	f.settled(2*lease+slack, b, pods...)
	for _, c := range f.ep.Calls()[thawed:] {
		obj, _ := c.Body["object"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		if by := c.Header.Get(replicaHeader); by == "r1" && changed[c.Key] && spec["v"] != "3" {
			t.Errorf("the thawed replica called for %s with spec.v %v from its stale cache (#%d)", c.Key, spec["v"], c.Seq)
		}
	}
	if left, err := f.unconverged(t.Context(), want); err != nil || len(left) > 0 {
		t.Fatalf("after r1 thawed, not as the others left them: %v (%v)", left, err)
	}
	for name, rv := range rvs {
		if now := f.rv(name); now != rv {
			t.Errorf("%s written after the others converged it (resourceVersion %s, then %s)", name, rv, now)
		}
	}

	// SIGKILL r0: nothing of it releases its Leases; the others wait them out.
	holders = f.settled(slack, b, pods...)
	if err := reps["r0"].Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-reps["r0"].Exited()
	killed := time.Now()
	changed = f.setBuckets(crs, holdersOf(holders, "r0"), b, want, "4")
	// The Leases expire LeaseDuration after r0's last renewal; the next round of another
	// replica (at most 2 jittered retry periods, as it may also need to see the member
	// Lease expire) takes them and queues their CRs; slack covers listing the bucket.
	f.waitConverged("the killed replica's widgets changed after the kill", lease+2*jittered*2+slack, want)
	t.Logf("r0's buckets %v taken and %d widgets converged %s after the kill", holdersOf(holders, "r0"), len(changed), time.Since(killed).Round(time.Millisecond))
	f.settled(lease+slack, b, "r1", "r2")

	// A new replica joins while every widget changes: it gets its share within two Lease
	// periods (the others hand buckets back in their next rounds; it takes them as they
	// are released), and every widget converges.
	f.sharded("r3", b, "--endpoint", f.via("r3"))
	f.setAll(want, "5")
	f.settled(2*lease+slack, b, "r1", "r2", "r3")
	f.waitConverged("every widget changed while r3 joined", slack, want)
	for _, o := range f.ep.Overlaps() {
		t.Errorf("overlapping calls for %s: #%d by %s and #%d by %s", o.Key, o.First.Seq, o.First.Header.Get(replicaHeader),
			o.Second.Seq, o.Second.Header.Get(replicaHeader))
	}
}

// setBuckets writes spec.v = v on each of crs in one of buckets (of b), records it in want
// and returns their keys; it fails the test when there are none.
func (f *fixture) setBuckets(crs []*unstructured.Unstructured, buckets []int, b int, want map[string]string, v string) map[string]bool {
	f.t.Helper()
	out := map[string]bool{}
	for _, cr := range crs {
		if slices.Contains(buckets, shard.BucketOf(cr.GetUID(), b)) {
			f.setV(cr.GetName(), v)
			want[cr.GetName()] = v
			out[cr.GetNamespace()+"/"+cr.GetName()] = true
		}
	}
	if len(out) == 0 {
		f.t.Fatalf("buckets %v hold none of the %d widgets: the sample proves nothing", buckets, len(crs))
	}
	return out
}

// takeEvents waits until each bucket Lease of b carries an Event of its take (the
// broadcaster sends them within a second or so).
func (f *fixture) takeEvents(b int) {
	f.t.Helper()
	testkit.Eventually(f.t, "an Event of each bucket's take", 100*time.Millisecond, slack, func(ctx context.Context) (bool, error) {
		evs, err := env.Clientset.CoreV1().Events(f.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		taken := map[string]bool{}
		for _, ev := range evs.Items {
			if ev.Reason == run.EventShardBucketTaken && ev.InvolvedObject.Kind == "Lease" {
				taken[ev.InvolvedObject.Name] = true
			}
		}
		for i := range b {
			if !taken[naming.BucketLeaseName("orkestra", i, b)] {
				return false, fmt.Errorf("no %s Event on %s", run.EventShardBucketTaken, naming.BucketLeaseName("orkestra", i, b))
			}
		}
		return true, nil
	})
}
