package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// result is one system's run at one N.
type result struct {
	System           string  `json:"system"`
	N                int     `json:"n"`
	ConvergedSeconds float64 `json:"convergedSeconds"`
	ShareOfCeiling   float64 `json:"shareOfCeiling,omitempty"`
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerCRMillis   float64 `json:"cpuPerCRMillis"`
	PeakRSSMiB       float64 `json:"peakRSSMiB"`
	CallsPerCR       float64 `json:"callsPerCR"`
	WritesPerCR      float64 `json:"writesPerCR"`
	ReadsPerCR       float64 `json:"readsPerCR"`
	EventWrites      float64 `json:"eventWrites"`
	P50Millis        float64 `json:"p50Millis"`
	P99Millis        float64 `json:"p99Millis"`
	IdleSeconds      float64 `json:"idleSeconds,omitempty"`
	IdleWrites       float64 `json:"idleWrites"`
	IdleCalls        float64 `json:"idleCalls"`
	Timeline         []point `json:"timeline"`
}

func measureConvergence(ctx context.Context, bin string, o options) error {
	var all []result
	for _, n := range o.sizes {
		var ceiling float64
		for _, sys := range o.systems {
			fmt.Fprintf(os.Stderr, "bench: %s, N=%d ...\n", sys, n)
			r, err := measure(ctx, bin, sys, n, o)
			if err != nil {
				return fmt.Errorf("%s at N=%d: %w", sys, n, err)
			}
			if sys == "ceiling" {
				ceiling = r.ConvergedSeconds
			}
			if ceiling > 0 {
				r.ShareOfCeiling = ceiling / r.ConvergedSeconds
			}
			fmt.Fprintf(os.Stderr, "bench: %s, N=%d: converged in %.1fs\n", sys, n, r.ConvergedSeconds)
			all = append(all, r)
		}
	}
	return report(os.Stdout, o.out, all)
}

func measure(ctx context.Context, bin, sys string, n int, o options) (result, error) {
	res := result{System: sys, N: n}
	dir, err := os.MkdirTemp(o.out, fmt.Sprintf("%s-%d-", sys, n))
	if err != nil {
		return res, err
	}
	c, err := newCluster(ctx, dir)
	if err != nil {
		return res, err
	}
	defer c.stop(nil)
	rec := newReconciler()
	defer rec.srv.Close()
	var r *running
	switch sys {
	case "ceiling":
		r, err = startCeiling(c)
	case "ork":
		var extra []string
		var metrics string
		if o.profile > 0 {
			if metrics, err = freeAddr(); err != nil {
				return res, err
			}
			extra = []string{"--metrics-addr", metrics, "--profiling"}
		}
		r, err = startOrk(ctx, c, bin, rec.srv.URL, extra)
		if err == nil && o.profile > 0 {
			defer profileCPU(metrics, o.profile, filepath.Join(o.out, fmt.Sprintf("ork-cpu-%d.pprof", n)))()
		}
	default:
		workers, ok := operatorSystems[sys]
		if !ok {
			return res, fmt.Errorf("unknown system %q (ceiling, ork, controller-runtime, controller-runtime-32)", sys)
		}
		r, err = startOperator(ctx, c, workers)
	}
	if err != nil {
		return res, err
	}
	defer r.stop()
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cv, err := watchConvergence(watchCtx, c, n)
	if err != nil {
		return res, err
	}
	before, err := scrapeRequests(ctx, c.env)
	if err != nil {
		return res, err
	}
	start := time.Now()
	created := make(chan error, 1)
	go func() {
		created <- c.createCRs(ctx, n, func(name string, at time.Time) { cv.markCreated(name, at); r.feed(name) })
	}()
	select {
	case <-cv.done:
	case err := <-r.done:
		return res, fmt.Errorf("exited before convergence: %v (log %s)", err, r.log.Name())
	case <-time.After(o.timeout):
		return res, fmt.Errorf("not converged within %s: %d of %d Ready", o.timeout, len(cv.ready), n)
	case <-ctx.Done():
		return res, ctx.Err()
	}
	elapsed := time.Since(start)
	if err := <-created; err != nil {
		return res, err
	}
	st, err := r.stats()
	if err != nil {
		return res, err
	}
	after, err := scrapeRequests(ctx, c.env)
	if err != nil {
		return res, err
	}
	delta := after.minus(before)
	res.ConvergedSeconds = elapsed.Seconds()
	res.CPUSeconds = st.CPU.Seconds()
	res.CPUPerCRMillis = 1000 * st.CPU.Seconds() / float64(n)
	res.PeakRSSMiB = float64(st.PeakRSS) / (1 << 20)
	res.CallsPerCR = float64(rec.calls.Load()) / float64(n)
	res.WritesPerCR = delta.writes(reconcileWrites) / float64(n)
	res.ReadsPerCR = (delta["GET deployments"] + delta["GET services"] + delta["GET apps"]) / float64(n)
	res.EventWrites = delta.writes(eventWrites)
	var lat []time.Duration
	res.Timeline, lat = cv.timeline(start)
	res.P50Millis, res.P99Millis = percentile(lat, 0.50), percentile(lat, 0.99)
	if sys != "ceiling" && o.idle > 0 {
		if err := idle(ctx, c, rec, o.idle, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// idle counts what a system writes (and ork calls) while nothing changes.
func idle(ctx context.Context, c *cluster, rec *reconciler, d time.Duration, res *result) error {
	before, err := scrapeRequests(ctx, c.env)
	if err != nil {
		return err
	}
	calls := rec.calls.Load()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := scrapeRequests(ctx, c.env)
	if err != nil {
		return err
	}
	delta := after.minus(before)
	res.IdleSeconds = d.Seconds()
	// Lease renewals aside (there are none without --leader-elect), every write counts.
	res.IdleWrites = delta.writes(func(r string) bool { return r != "leases" })
	res.IdleCalls = float64(rec.calls.Load() - calls)
	return nil
}

func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(p * float64(len(ds)-1))
	return float64(ds[i].Microseconds()) / 1000
}

// profileCPU starts taking ork's CPU profile; the returned func waits for it and saves it.
func profileCPU(addr string, d time.Duration, path string) func() {
	done := make(chan error, 1)
	go func() {
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
		if err != nil {
			done <- err
			return
		}
		defer res.Body.Close()
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, res.Body)
		done <- errors.Join(err, f.Close())
	}()
	return func() {
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "bench: profile:", err)
			return
		}
		fmt.Fprintln(os.Stderr, "bench: CPU profile in", path)
	}
}
