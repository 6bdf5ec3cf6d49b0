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

// result is one system's run at one N of one workload.
type result struct {
	Run      int    `json:"run"`
	Workload string `json:"workload"`
	System   string `json:"system"`
	N        int    `json:"n"`
	// Workers is a ceiling's number of goroutines.
	Workers          int     `json:"workers,omitempty"`
	ConvergedSeconds float64 `json:"convergedSeconds"`
	// ShareOfCeiling is ceiling (a)'s time (the faster of its worker counts, in the same
	// run) over this system's.
	ShareOfCeiling float64 `json:"shareOfCeiling,omitempty"`
	CPUSeconds     float64 `json:"cpuSeconds"`
	CPUPerCRMillis float64 `json:"cpuPerCRMillis"`
	// ControlPlaneCPUPerCRMillis is the CPU the apiserver and etcd spent per CR until
	// convergence.
	ControlPlaneCPUPerCRMillis float64 `json:"controlPlaneCPUPerCRMillis"`
	PeakRSSMiB                 float64 `json:"peakRSSMiB"`
	CallsPerCR                 float64 `json:"callsPerCR"`
	WritesPerCR                float64 `json:"writesPerCR"`
	ReadsPerCR                 float64 `json:"readsPerCR"`
	EventWrites                float64 `json:"eventWrites"`
	// RequestsPerCR is the request mix: the apiserver's count of each kind of request
	// ("VERB resource") per CR until convergence, the harness's own aside (requestMix).
	RequestsPerCR map[string]float64 `json:"requestsPerCR"`
	P50Millis     float64            `json:"p50Millis"`
	P99Millis     float64            `json:"p99Millis"`
	IdleSeconds   float64            `json:"idleSeconds,omitempty"`
	IdleWrites    float64            `json:"idleWrites"`
	// IdleEventWrites are the Events among IdleWrites: a Reconciled Event the recorder
	// sends after its CR was Ready is not a pass.
	IdleEventWrites float64 `json:"idleEventWrites"`
	IdleCalls       float64 `json:"idleCalls"`
	// EditToReadySeconds (startup workload): from the spec edit to that CR Ready at the
	// edited generation; BacklogSeconds: from ork ready to every CR Ready.
	EditToReadySeconds float64 `json:"editToReadySeconds,omitempty"`
	BacklogSeconds     float64 `json:"backlogSeconds,omitempty"`
	Timeline           []point `json:"timeline"`
}

// startSystem starts sys on c; workers is a ceiling's goroutine count.
func startSystem(ctx context.Context, c *cluster, bin string, sys system, rec *reconciler, o options, n int) (*running, func(), error) {
	switch sys.kind {
	case kindCeilingA, kindCeilingB:
		kind := ceilingA
		if sys.kind == kindCeilingB {
			kind = ceilingB
		}
		r, err := startCeiling(ctx, c, kind, sys.workers)
		return r, func() {}, err
	case kindOrk:
		if o.profile == 0 {
			r, err := startOrk(ctx, c, bin, rec.srv.URL, nil)
			return r, func() {}, err
		}
		metrics, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		r, err := startOrk(ctx, c, bin, rec.srv.URL, []string{"--metrics-addr", metrics, "--profiling"})
		if err != nil {
			return nil, nil, err
		}
		cpu := profileCPU(metrics, o.profile, filepath.Join(o.out, fmt.Sprintf("ork-cpu-%s-%d.pprof", c.w.name, n)))
		heap := filepath.Join(o.out, fmt.Sprintf("ork-heap-%s-%d.pprof", c.w.name, n))
		return r, func() { cpu(); saveHeap(metrics, heap) }, nil
	}
	r, err := startOperator(ctx, c, sys.workers)
	return r, func() {}, err
}

func measure(ctx context.Context, bin string, sys system, w workload, n int, o options) (result, error) {
	res := result{Workload: w.name, System: sys.name, N: n}
	if sys.kind == kindCeilingA || sys.kind == kindCeilingB {
		res.Workers = sys.workers
	}
	dir, err := os.MkdirTemp(o.out, fmt.Sprintf("%s-%s-%d-", w.name, sys.name, n))
	if err != nil {
		return res, err
	}
	c, err := newCluster(ctx, dir, w)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.stop(nil) }()
	rec := newReconciler(w)
	defer rec.srv.Close()
	r, profiled, err := startSystem(ctx, c, bin, sys, rec, o, n)
	if err != nil {
		return res, err
	}
	defer func() { _ = r.stop() }()
	defer profiled()
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
	cpBefore, err := controlPlaneCPU()
	if err != nil {
		return res, err
	}
	start := time.Now()
	created := make(chan error, 1)
	go func() {
		created <- c.createCRs(ctx, n, func(cr createdCR) { cv.markCreated(cr.name, cr.at); r.feed(cr) })
	}()
	if err := cv.wait(ctx, r, o.timeout); err != nil {
		return res, err
	}
	elapsed := time.Since(start)
	if err := <-created; err != nil {
		return res, err
	}
	st, err := r.stats()
	if err != nil {
		return res, err
	}
	cpAfter, err := controlPlaneCPU()
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
	res.ControlPlaneCPUPerCRMillis = 1000 * (cpAfter - cpBefore).Seconds() / float64(n)
	res.PeakRSSMiB = float64(st.PeakRSS) / (1 << 20)
	res.CallsPerCR = float64(rec.calls.Load()) / float64(n)
	res.WritesPerCR = delta.writes(w.isReconcileWrite) / float64(n)
	res.ReadsPerCR = delta.reads(w.isReconcileRead) / float64(n)
	res.EventWrites = delta.writes(eventWrites)
	res.RequestsPerCR = requestMix(delta, w, n)
	var lat []time.Duration
	res.Timeline, lat = cv.timeline(start)
	res.P50Millis, res.P99Millis = percentile(lat, 0.50), percentile(lat, 0.99)
	if !sys.isCeiling() && o.idle > 0 {
		if err := idle(ctx, c, rec, o.idle, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// wait waits until every CR is Ready, the system exits, the timeout passes or ctx ends.
func (cv *convergence) wait(ctx context.Context, r *running, timeout time.Duration) error {
	select {
	case <-cv.done:
		return nil
	case err := <-r.done:
		return fmt.Errorf("exited before convergence: %v (log %s)", err, r.log.Name())
	case <-time.After(timeout):
		cv.mu.Lock()
		defer cv.mu.Unlock()
		return fmt.Errorf("not converged within %s: %d of %d Ready", timeout, len(cv.ready), cv.total)
	case <-ctx.Done():
		return ctx.Err()
	}
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
	res.IdleEventWrites = delta.writes(eventWrites)
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

// saveHeap saves ork's heap profile, after a collection: at the end of a measurement, what
// ork holds at rest with everything cached.
func saveHeap(addr, path string) {
	err := func() error {
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/heap?gc=1", addr))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, res.Body)
		return errors.Join(err, f.Close())
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: heap profile:", err)
		return
	}
	fmt.Fprintln(os.Stderr, "bench: heap profile in", path)
}

// profileCPU starts taking ork's CPU profile; the returned func waits for it and saves it.
func profileCPU(addr string, d time.Duration, path string) func() {
	done := make(chan error, 1)
	go func() {
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(1, int(d.Seconds()))))
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
