package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testenv"
)

// shardBuckets is the ring's B in the shard workload: more buckets than replicas, so that
// four replicas get four each.
const shardBuckets = 16

// shardResult is one ring of `ork run --shard-buckets` replicas over n CRs that exist
// before the ring starts.
type shardResult struct {
	Replicas int `json:"replicas"`
	N        int `json:"n"`
	// CatchUpSeconds: from the ring's start (started together, every replica ready) to every
	// CR Ready: the pass each CR gets from the replica that takes its bucket, the buckets'
	// settling into fair shares included.
	CatchUpSeconds float64 `json:"catchUpSeconds"`
	// RSSMiB and PeakRSSMiB are per replica, at rest after convergence and at peak.
	RSSMiB     []float64 `json:"rssMiB"`
	PeakRSSMiB []float64 `json:"peakRSSMiB"`
	// LeaseWritesPerSecond at rest: the renewals of the member and bucket Leases.
	LeaseWritesPerSecond float64 `json:"leaseWritesPerSecond"`
	// FailoverSeconds: after kill -9 of one replica and an edit of every CR of its buckets,
	// until each of those is Ready at the new generation (0 with one replica).
	FailoverSeconds float64 `json:"failoverSeconds,omitempty"`
	FailoverCRs     int     `json:"failoverCRs,omitempty"`
}

func measureShards(ctx context.Context, bin string, replicas []int, n int, o options) error {
	runs := max(o.runs, 1)
	var all []shardResult
	// Rings of each size in turn, run after run, so that a disturbance of the machine
	// spreads over the sizes instead of landing on one.
	for run := range runs {
		for _, k := range replicas {
			fmt.Fprintf(os.Stderr, "bench: shard, run %d of %d, %d replica(s), N=%d ...\n", run+1, runs, k, n)
			r, err := shardRing(ctx, bin, k, n, o)
			if err != nil {
				return fmt.Errorf("shard, %d replicas: %w", k, err)
			}
			all = append(all, r)
		}
	}
	fmt.Printf("`ork run --shard-buckets %d`, N = %d CRs existing before the ring starts (Leases 15 s / 10 s / 2 s), %d run(s): median (min–max)\n\n", shardBuckets, n, runs)
	fmt.Println("| replicas | catch-up, ready to every CR Ready | RSS at rest, largest replica | peak RSS, largest replica | Lease writes/s at rest | failover: kill -9, edits of its CRs Ready |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, k := range replicas {
		var catchUp, rss, peak, writes, fail []float64
		crs := 0
		for _, r := range all {
			if r.Replicas != k {
				continue
			}
			catchUp, writes = append(catchUp, r.CatchUpSeconds), append(writes, r.LeaseWritesPerSecond)
			rss, peak = append(rss, slices.Max(r.RSSMiB)), append(peak, slices.Max(r.PeakRSSMiB))
			if r.FailoverCRs > 0 {
				fail, crs = append(fail, r.FailoverSeconds), crs+r.FailoverCRs
			}
		}
		failCell := "—"
		if len(fail) > 0 {
			failCell = fmt.Sprintf("%s s (%d CRs a run)", spreadCell(fail, "%.1f"), crs/len(fail))
		}
		fmt.Printf("| %d | %s s | %s MiB | %s MiB | %s | %s |\n", k, spreadCell(catchUp, "%.1f"), spreadCell(rss, "%.0f"),
			spreadCell(peak, "%.0f"), spreadCell(writes, "%.2f"), failCell)
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "shard.json"), b, 0o644)
}

// spreadCell is vs as "median (min–max)", or the one value of a single run, in format f.
func spreadCell(vs []float64, f string) string {
	s := spreadOf(vs)
	if s.Runs == 1 {
		return fmt.Sprintf(f, s.Median)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
}

// shardRing measures one ring of k replicas.
func shardRing(ctx context.Context, bin string, k, n int, o options) (shardResult, error) {
	res := shardResult{Replicas: k, N: n}
	dir, err := os.MkdirTemp(o.out, fmt.Sprintf("shard-%d-", k))
	if err != nil {
		return res, err
	}
	w := workloads["default"]
	c, err := newClusterWith(ctx, dir, w, testenv.Options{FeatureGates: "ShardedListAndWatch=true"})
	if err != nil {
		return res, err
	}
	defer func() { _ = c.stop(nil) }()
	rec := newReconciler(w)
	defer rec.srv.Close()
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	gens, err := watchGenerations(watchCtx, c)
	if err != nil {
		return res, err
	}
	var mu sync.Mutex
	uids := map[string]types.UID{}
	if err := c.createCRs(ctx, n, func(cr createdCR) { mu.Lock(); uids[cr.name] = cr.uid; mu.Unlock() }); err != nil {
		return res, err
	}
	katalog := filepath.Join(c.dir, "katalog.yaml")
	if err := os.WriteFile(katalog, []byte(w.katalog(rec.srv.URL)), 0o600); err != nil {
		return res, err
	}
	// The replicas start together, as a Deployment's pods do; each is ready once its caches
	// listed with the buckets it holds.
	ring, health := make([]*running, k), make([]string, k)
	for i := range ring {
		if health[i], err = freeAddr(); err != nil {
			return res, err
		}
		cmd := exec.Command(bin, "run", "-f", katalog, "--kubeconfig", c.env.Kubeconfig, "--namespace", c.ns,
			"--health-addr", health[i], "--metrics-addr=", fmt.Sprintf("--shard-buckets=%d", shardBuckets))
		cmd.Env = append(os.Environ(), fmt.Sprintf("POD_NAME=replica-%d", i))
		if ring[i], err = start(cmd, filepath.Join(c.dir, fmt.Sprintf("replica-%d.log", i))); err != nil {
			return res, err
		}
		defer func(r *running) { _ = r.stop() }(ring[i])
	}
	for i, r := range ring {
		if err := r.waitReady(ctx, fmt.Sprintf("replica %d", i), health[i]); err != nil {
			return res, err
		}
	}
	started := time.Now()
	all := slices.Collect(func(yield func(string) bool) {
		for i := range n {
			if !yield(crName(i)) {
				return
			}
		}
	})
	if err := gens.wait(ctx, all, 0, o.timeout); err != nil {
		return res, fmt.Errorf("catch-up: %w", err)
	}
	res.CatchUpSeconds = time.Since(started).Seconds()
	if err := sleep(ctx, settle); err != nil {
		return res, err
	}
	for _, r := range ring {
		st, err := r.stats()
		if err != nil {
			return res, err
		}
		res.RSSMiB = append(res.RSSMiB, float64(st.RSS)/(1<<20))
		res.PeakRSSMiB = append(res.PeakRSSMiB, float64(st.PeakRSS)/(1<<20))
	}
	before, err := scrapeRequests(ctx, c.env)
	if err != nil {
		return res, err
	}
	if err := sleep(ctx, o.idle); err != nil {
		return res, err
	}
	after, err := scrapeRequests(ctx, c.env)
	if err != nil {
		return res, err
	}
	res.LeaseWritesPerSecond = after.minus(before).writes(func(r string) bool { return r == "leases" }) / o.idle.Seconds()
	if k < 2 {
		return res, nil
	}
	return res, failover(ctx, c, ring[0], "replica-0", uids, gens, o, &res)
}

// failover kills the replica pod with SIGKILL, edits every CR of the buckets it held, and
// times until each is Ready at the new generation: the Lease's expiry, the take, the list
// of the taken buckets and the passes.
func failover(ctx context.Context, c *cluster, victim *running, pod string, uids map[string]types.UID, gens *generations, o options, res *shardResult) error {
	held := map[int]bool{}
	leases, err := c.env.Clientset.CoordinationV1().Leases(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, l := range leases.Items {
		i, b, ok := naming.ParseBucketLeaseName("orkestra", l.Name)
		if ok && b == shardBuckets && l.Spec.HolderIdentity != nil && strings.HasPrefix(*l.Spec.HolderIdentity, pod+"_") {
			held[i] = true
		}
	}
	var edited []string
	for name, uid := range uids {
		if held[shard.BucketOf(uid, shardBuckets)] {
			edited = append(edited, name)
		}
	}
	if len(edited) == 0 {
		return fmt.Errorf("%s holds no bucket", pod)
	}
	_ = victim.cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	for _, name := range edited {
		if _, err := c.dyn.Resource(crGVR(c.w.kindOf(0).plural)).Namespace(c.ns).Patch(ctx, name, types.MergePatchType,
			[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("edit %s: %w", name, err)
		}
	}
	if err := gens.wait(ctx, edited, 2, o.timeout); err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	res.FailoverSeconds, res.FailoverCRs = time.Since(killed).Seconds(), len(edited)
	return nil
}

// generations watches the CRs for Ready with the generation each has observed.
type generations struct {
	mu       sync.Mutex
	observed map[string]int64 // Ready CRs: status.observedGeneration
}

func watchGenerations(ctx context.Context, c *cluster) (*generations, error) {
	g := &generations{observed: map[string]int64{}}
	seen := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || !isReady(u) {
			return
		}
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		g.mu.Lock()
		g.observed[u.GetName()] = og
		g.mu.Unlock()
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(c.dyn, crGVR(c.w.kinds[0].plural), c.ns, 0, cache.Indexers{}, nil).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }}); err != nil {
		return nil, err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, ctx.Err()
	}
	return g, nil
}

// wait waits until every name is Ready having observed at least generation gen.
func (g *generations) wait(ctx context.Context, names []string, gen int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		g.mu.Lock()
		left := 0
		for _, name := range names {
			if og, ok := g.observed[name]; !ok || og < gen {
				left++
			}
		}
		g.mu.Unlock()
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d CRs not Ready at generation %d within %s", left, len(names), gen, timeout)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}
