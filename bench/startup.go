package main

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// measureStartup is the startup workload: n CRs exist before ork starts, so that ork passes
// every one of them at start-up; as soon as ork is ready (its caches synced, the start-up
// passes under way) one CR's spec is edited, and timed is how long that edit waits: from the
// edit to the CR Ready with the edited generation observed. The CR edited is the last in
// the initial list's order, which a first-in first-out queue passes last.
func measureStartup(ctx context.Context, bin string, sys system, w workload, n int, o options) (result, error) {
	res := result{Workload: w.name, System: sys.name, N: n}
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
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cv, err := watchConvergence(watchCtx, c, n)
	if err != nil {
		return res, err
	}
	if err := c.createCRs(ctx, n, func(createdCR) {}); err != nil {
		return res, err
	}
	r, err := startOrk(ctx, c, bin, rec.srv.URL, nil)
	if err != nil {
		return res, err
	}
	defer func() { _ = r.stop() }()
	ready := time.Now()
	name := crName(n - 1)
	edited := cv.watchEdit(name, 2)
	out, err := c.dyn.Resource(crGVR(w.kindOf(n-1).plural)).Namespace(c.ns).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
	if err != nil {
		return res, fmt.Errorf("edit %s: %w", name, err)
	}
	editAt := time.Now()
	if out.GetGeneration() != 2 {
		return res, fmt.Errorf("edit %s: generation %d, want 2", name, out.GetGeneration())
	}
	select {
	case at := <-edited:
		res.EditToReadySeconds = at.Sub(editAt).Seconds()
	case err := <-r.done:
		return res, fmt.Errorf("exited before the edit was Ready: %v (log %s)", err, r.log.Name())
	case <-time.After(o.timeout):
		return res, fmt.Errorf("%s not Ready at generation 2 within %s", name, o.timeout)
	case <-ctx.Done():
		return res, ctx.Err()
	}
	if err := cv.wait(ctx, r, o.timeout); err != nil {
		return res, err
	}
	if pts, _ := cv.timeline(ready); len(pts) > 0 {
		res.BacklogSeconds = pts[len(pts)-1].T
	}
	st, err := r.stats()
	if err != nil {
		return res, err
	}
	res.CPUSeconds, res.PeakRSSMiB = st.CPU.Seconds(), float64(st.PeakRSS)/(1<<20)
	res.CPUPerCRMillis = 1000 * st.CPU.Seconds() / float64(n)
	res.CallsPerCR = float64(rec.calls.Load()) / float64(n)
	return res, nil
}
