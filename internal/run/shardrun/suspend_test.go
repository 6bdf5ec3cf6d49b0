package shardrun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// ork_suspended_crs counts the suspended custom resources of the buckets a replica holds: the
// buckets a joining replica takes leave the first one's count for the new one's.
func TestSuspendedCRsGaugeCountsTheHeldBucketsOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const b, n = 4, 12
	crs := f.create(n, "1")
	for _, cr := range crs {
		if _, err := f.dyn.Patch(t.Context(), cr.GetName(), "application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"orkestra.orkspace.io/reconcile":"suspended"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addr := map[string]string{"a": testkit.FreeAddr(t), "c": testkit.FreeAddr(t)}
	waitGauge := func(pod string, want int) {
		t.Helper()
		testkit.Eventually(t, fmt.Sprintf("ork_suspended_crs of %s at %d", pod, want), 100*time.Millisecond, slack, func(ctx context.Context) (bool, error) {
			v, err := metric(ctx, addr[pod], `ork_suspended_crs{crd="widget"}`)
			if err != nil && strings.Contains(err.Error(), "no sample") {
				v, err = 0, nil // no pass has set it yet
			}
			if err == nil && v != float64(want) {
				err = fmt.Errorf("%v", v)
			}
			return err == nil, err
		})
	}
	f.sharded("a", b, "--endpoint", f.via("a"), "--metrics-addr="+addr["a"])
	f.settled(leaseDuration+slack, b, "a")
	waitGauge("a", n)

	f.sharded("c", b, "--endpoint", f.via("c"), "--metrics-addr="+addr["c"])
	holders := f.settled(2*leaseDuration+slack, b, "a", "c")
	want := map[string]int{}
	for _, cr := range crs {
		want[holders[shard.BucketOf(cr.GetUID(), b)]]++
	}
	for _, pod := range []string{"a", "c"} {
		waitGauge(pod, want[pod])
	}
	if len(f.ep.Calls()) > 0 {
		t.Errorf("%d calls for suspended widgets", len(f.ep.Calls()))
	}
}
