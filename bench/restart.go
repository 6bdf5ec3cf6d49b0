package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// restartResult is one restart of ork over n converged CRs: with or without
// reconcile.remote.skipUnchanged (docs/remote-reconciler.md#failover-without-re-asking).
type restartResult struct {
	N             int  `json:"n"`
	SkipUnchanged bool `json:"skipUnchanged"`
	// CatchUpSeconds: from ork ready (its caches synced) to every CR's first pass finished,
	// called or skipped, as ork's own counters say.
	CatchUpSeconds float64 `json:"catchUpSeconds"`
	// Calls the reconciler received meanwhile.
	Calls int64 `json:"calls"`
}

// measureRestart converges n CRs under an ork with skipUnchanged (so that every CR's
// status.lastDecision records its children), stops it, and restarts ork over them twice per
// run: without skipUnchanged and with it, in turns first.
func measureRestart(ctx context.Context, bin string, n int, o options) error {
	var all []restartResult
	for run := range max(o.runs, 1) {
		fmt.Fprintf(os.Stderr, "bench: restart, run %d of %d, N=%d ...\n", run+1, max(o.runs, 1), n)
		rs, err := restartRun(ctx, bin, n, run, o)
		if err != nil {
			return err
		}
		all = append(all, rs...)
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "restart.json"), b, 0o644); err != nil {
		return err
	}
	fmt.Printf("\n## ork restarted over %d converged CRs (medians of %d runs)\n\n", n, max(o.runs, 1))
	fmt.Println("| skipUnchanged | catch-up, ready to every CR passed | calls |")
	fmt.Println("|---|---|---|")
	for _, skip := range []bool{false, true} {
		var secs, calls []float64
		for _, r := range all {
			if r.SkipUnchanged == skip {
				secs, calls = append(secs, r.CatchUpSeconds), append(calls, float64(r.Calls))
			}
		}
		fmt.Printf("| %v | %s s | %s |\n", skip, spreadCell(secs, "%.2f"), spreadCell(calls, "%.0f"))
	}
	// Each run's two restarts share its cluster and its moment of the machine: the ratio is
	// taken within a run, as the shares of convergence are.
	var ratios []float64
	for i := 0; i+1 < len(all); i += 2 {
		off, on := all[i], all[i+1]
		if off.SkipUnchanged {
			off, on = on, off
		}
		if !off.SkipUnchanged && on.SkipUnchanged && off.CatchUpSeconds > 0 {
			ratios = append(ratios, on.CatchUpSeconds/off.CatchUpSeconds)
		}
	}
	fmt.Printf("\ncatch-up with skipUnchanged over without, within each run: %s\n", spreadCell(ratios, "%.2f"))
	return nil
}

// skipKatalog is the workload's Katalog with skipUnchanged on every CRD.
func skipKatalog(w workload, endpoint string) string {
	return strings.ReplaceAll(w.katalog(endpoint), "            managedResources:\n",
		"            skipUnchanged: {maxAge: 1h}\n            managedResources:\n")
}

func restartRun(ctx context.Context, bin string, n, run int, o options) ([]restartResult, error) {
	dir, err := os.MkdirTemp(o.out, fmt.Sprintf("restart-%d-", n))
	if err != nil {
		return nil, err
	}
	w := workloads["default"]
	c, err := newCluster(ctx, dir, w)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.stop(nil) }()
	rec := newReconciler(w)
	defer rec.srv.Close()
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cv, err := watchConvergence(watchCtx, c, n)
	if err != nil {
		return nil, err
	}
	r, err := startOrkWith(ctx, c, bin, skipKatalog(w, rec.srv.URL), nil)
	if err != nil {
		return nil, err
	}
	if err := c.createCRs(ctx, n, func(createdCR) {}); err != nil {
		_ = r.stop()
		return nil, err
	}
	if err := cv.wait(ctx, r, o.timeout); err != nil {
		_ = r.stop()
		return nil, err
	}
	// The last status writes (each CR's record) land with its Ready: settle, then stop.
	if err := sleep(ctx, settle); err != nil {
		return nil, err
	}
	if err := r.stop(); err != nil {
		return nil, err
	}
	var out []restartResult
	order := []bool{false, true}
	if run%2 == 1 {
		// Every other run the other way round: neither restart always finds the cluster's
		// and the machine's caches as the other left them.
		order = []bool{true, false}
	}
	for _, skip := range order {
		doc := w.katalog(rec.srv.URL)
		if skip {
			doc = skipKatalog(w, rec.srv.URL)
		}
		res, err := restartOnce(ctx, c, bin, doc, rec, n, skip, o)
		if err != nil {
			return nil, err
		}
		res.SkipUnchanged = skip
		out = append(out, res)
	}
	return out, nil
}

// restartPoll is how often a restart's catch-up is polled: its resolution, against a
// catch-up of a few hundred milliseconds with skipUnchanged. Each poll is a scrape of
// ork's /metrics, which costs ork about the same in both restarts.
const restartPoll = 10 * time.Millisecond

// restartOnce starts ork on doc and times its catch-up.
func restartOnce(ctx context.Context, c *cluster, bin, doc string, rec *reconciler, n int, skip bool, o options) (restartResult, error) {
	res := restartResult{N: n}
	metrics, err := freeAddr()
	if err != nil {
		return res, err
	}
	calls := rec.calls.Load()
	args := []string{"--metrics-addr", metrics}
	if o.profile > 0 {
		args = append(args, "--profiling")
	}
	r, err := startOrkWith(ctx, c, bin, doc, args)
	if err != nil {
		return res, err
	}
	defer func() { _ = r.stop() }()
	ready := time.Now()
	profiled := func() {}
	if o.profile > 0 {
		// From ready, the catch-up's CPU: what a skipped pass costs against a call.
		profiled = profileCPU(metrics, o.profile, filepath.Join(o.out, fmt.Sprintf("ork-cpu-restart-%d-skip-%t.pprof", n, skip)))
	}
	deadline := time.Now().Add(o.timeout)
	for {
		passed, err := scrapePasses(ctx, metrics)
		if err == nil && passed >= float64(n) {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("restart: %v of %d CRs passed within %s (err %v)", passed, n, o.timeout, err)
		}
		if err := sleep(ctx, restartPoll); err != nil {
			return res, err
		}
	}
	res.CatchUpSeconds, res.Calls = time.Since(ready).Seconds(), rec.calls.Load()-calls
	profiled() // before the stop: the profile is ork's answer
	return res, r.stop()
}

// scrapePasses is ork's count of finished passes: ork_reconcile_total (every result) and
// ork_reconcile_skipped_unchanged_total.
func scrapePasses(ctx context.Context, addr string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	var n float64
	for _, name := range []string{"ork_reconcile_total", "ork_reconcile_skipped_unchanged_total"} {
		for _, m := range families[name].GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n, nil
}
