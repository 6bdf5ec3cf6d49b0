package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// memoryResult is ork's resident memory at rest with N CRs and their 2N children cached.
type memoryResult struct {
	N           int     `json:"n"`
	Objects     int     `json:"objects"`
	BaselineMiB float64 `json:"baselineMiB"`
	// BaselineAnonMiB and BaselineFileMiB split BaselineMiB: the heap, stacks and runtime,
	// and the binary's pages (RssAnon and RssFile in /proc/<pid>/status).
	BaselineAnonMiB float64 `json:"baselineAnonMiB"`
	BaselineFileMiB float64 `json:"baselineFileMiB"`
	RSSMiB          float64 `json:"rssMiB"`
	AnonMiB         float64 `json:"anonMiB"`
	PeakRSSMiB      float64 `json:"peakRSSMiB"`
	BytesPerCache   float64 `json:"bytesPerObject"`
}

// settle is how long ork is left alone before its memory is read: long enough for the
// garbage collector to have run after the burst.
const settle = 10 * time.Second

func measureMemory(ctx context.Context, bin string, o options) error {
	var all []memoryResult
	for _, n := range o.memory {
		fmt.Fprintf(os.Stderr, "bench: memory, N=%d ...\n", n)
		m, err := memoryAt(ctx, bin, n, o)
		if err != nil {
			return fmt.Errorf("memory at N=%d: %w", n, err)
		}
		all = append(all, m)
	}
	fmt.Println("| CRs | cached objects | RSS at rest, no CRs (anon + file) | RSS at rest (anon) | peak RSS | per cached object |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, m := range all {
		fmt.Printf("| %d | %d | %.0f MiB (%.0f + %.0f) | %.0f MiB (%.0f) | %.0f MiB | %.1f KiB |\n",
			m.N, m.Objects, m.BaselineMiB, m.BaselineAnonMiB, m.BaselineFileMiB, m.RSSMiB, m.AnonMiB, m.PeakRSSMiB, m.BytesPerCache/1024)
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "memory.json"), b, 0o644)
}

func memoryAt(ctx context.Context, bin string, n int, o options) (memoryResult, error) {
	m := memoryResult{N: n, Objects: 3 * n}
	dir, err := os.MkdirTemp(o.out, fmt.Sprintf("memory-%d-", n))
	if err != nil {
		return m, err
	}
	w := workloads["default"]
	c, err := newCluster(ctx, dir, w)
	if err != nil {
		return m, err
	}
	defer func() { _ = c.stop(nil) }()
	rec := newReconciler(w)
	defer rec.srv.Close()
	// With -profile, ork serves pprof, and its heap at rest is saved beside the figures.
	var extra []string
	metrics := ""
	if o.profile != 0 {
		if metrics, err = freeAddr(); err != nil {
			return m, err
		}
		extra = []string{"--metrics-addr", metrics, "--profiling"}
	}
	r, err := startOrk(ctx, c, bin, rec.srv.URL, extra)
	if err != nil {
		return m, err
	}
	defer func() { _ = r.stop() }()
	if err := sleep(ctx, settle); err != nil {
		return m, err
	}
	st, err := r.stats()
	if err != nil {
		return m, err
	}
	m.BaselineMiB = float64(st.RSS) / (1 << 20)
	m.BaselineAnonMiB, m.BaselineFileMiB = float64(st.RSSAnon)/(1<<20), float64(st.RSSFile)/(1<<20)
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cv, err := watchConvergence(watchCtx, c, n)
	if err != nil {
		return m, err
	}
	if err := c.createCRs(ctx, n, func(cr createdCR) { cv.markCreated(cr.name, cr.at) }); err != nil {
		return m, err
	}
	select {
	case <-cv.done:
	case <-time.After(o.timeout):
		return m, fmt.Errorf("not converged within %s", o.timeout)
	case <-ctx.Done():
		return m, ctx.Err()
	}
	if err := sleep(ctx, settle); err != nil {
		return m, err
	}
	if st, err = r.stats(); err != nil {
		return m, err
	}
	m.RSSMiB = float64(st.RSS) / (1 << 20)
	m.AnonMiB = float64(st.RSSAnon) / (1 << 20)
	m.PeakRSSMiB = float64(st.PeakRSS) / (1 << 20)
	m.BytesPerCache = float64(st.RSS-int64(m.BaselineMiB*(1<<20))) / float64(m.Objects)
	if metrics != "" {
		saveHeap(metrics, filepath.Join(o.out, fmt.Sprintf("ork-heap-memory-%d.pprof", n)))
	}
	return m, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
