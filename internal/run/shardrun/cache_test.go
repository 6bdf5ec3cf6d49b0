package shardrun_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// metric reads one sample (name with its labels, as exposed) from a replica's /metrics.
func metric(ctx context.Context, addr, sample string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no sample %s on %s", sample, addr)
}

// apiserverCounter reads one sample of the apiserver's own /metrics; a sample not exposed
// yet reads 0 (a counter the apiserver has not incremented).
func apiserverCounter(ctx context.Context, sample string) (float64, error) {
	raw, err := env.Clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, nil
}

func readyz(ctx context.Context, addr string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Each replica caches its own buckets' CRs: the one that sends the shard selector gets
// nothing from the apiserver that its client filter must drop; the one that sends none (as
// against a server without the gate) receives every CR and drops the others' — and both
// reconcile exactly their own buckets' CRs, and are ready once their caches listed.
func TestShardedCachesHoldTheirOwnBucketsOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const b, n = 4, 40
	want := map[string]string{}
	uids := map[string]types.UID{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()], uids[cr.GetName()] = "1", cr.GetUID()
	}
	health := map[string]string{"sel": testkit.FreeAddr(t), "nosel": testkit.FreeAddr(t)}
	f.sharded("sel", b, "--endpoint", f.via("sel"), "--health-addr="+health["sel"], "--metrics-addr="+health["sel"])
	f.sharded("nosel", b, "--endpoint", f.via("nosel"), "--health-addr="+health["nosel"], "--metrics-addr="+health["nosel"],
		"--shard-client-filter-only")
	f.waitConverged("every widget reconciled", leaseDuration+slack, want)
	holders := f.settled(leaseDuration+slack, b, "sel", "nosel")
	filtered := func() float64 {
		v, err := apiserverCounter(t.Context(), `apiserver_watch_filtered_events_total{group="testenv.orkspace.io",resource="widgets"}`)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := filtered()
	f.setAll(want, "2")
	f.waitConverged("every widget reconciled again", slack, want)
	// The selecting replica's watch is filtered by the apiserver: each update of a widget in
	// the other's buckets is one event it was not sent (other tests' widgets can only add).
	others := 0
	for name := range want {
		if holders[shard.BucketOf(uids[name], b)] != "sel" {
			others++
		}
	}
	if got := filtered() - before; got < float64(others) {
		t.Errorf("apiserver_watch_filtered_events_total rose by %v, want at least %d (the updates of the other replica's widgets)", got, others)
	}
	for _, c := range callsWith(f.ep, "2") {
		if by, owner := c.Header.Get(replicaHeader), holders[shard.BucketOf(uidOf(c), b)]; by != owner {
			t.Errorf("%s called by %s, its bucket held by %s", c.Key, by, owner)
		}
	}
	for pod, addr := range health {
		testkit.Eventually(t, pod+" ready with its buckets' caches listed", 100*time.Millisecond, slack, func(ctx context.Context) (bool, error) {
			code, body, err := readyz(ctx, addr)
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("/readyz %d: %s", code, body)
			}
			return err == nil, err
		})
		held, err := metric(t.Context(), addr, "ork_shard_buckets_held")
		if err != nil || held != float64(b/2) {
			t.Errorf("%s: ork_shard_buckets_held %v (%v), want %d", pod, held, err, b/2)
		}
	}
	dropped := func(pod string) float64 {
		v, err := metric(t.Context(), health[pod], `ork_shard_crs_dropped_total{crd="widget"}`)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if d := dropped("sel"); d != 0 {
		t.Errorf("the replica sending the shard selector dropped %v CRs: the apiserver did not filter", d)
	}
	// Its list alone brings the other replica's n/2-odd CRs; ≥ 1 is all that is certain.
	if d := dropped("nosel"); d < 1 {
		t.Errorf("the replica sending no selector dropped %v CRs: its client filter kept other buckets' CRs", d)
	}
}
