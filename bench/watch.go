package main

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// convergence watches the CRs and records when each first shows Ready=True.
type convergence struct {
	mu      sync.Mutex
	created map[string]time.Time
	ready   map[string]time.Time
	total   int
	done    chan struct{}
}

func watchConvergence(ctx context.Context, c *cluster, total int) (*convergence, error) {
	cv := &convergence{created: map[string]time.Time{}, ready: map[string]time.Time{}, total: total, done: make(chan struct{})}
	inf := dynamicinformer.NewFilteredDynamicInformer(c.dyn, crGVR(benchGroup), c.ns, 0, cache.Indexers{}, nil).Informer()
	seen := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok && isReady(u) {
			cv.markReady(u.GetName(), time.Now())
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) },
	}); err != nil {
		return nil, err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, ctx.Err()
	}
	return cv, nil
}

func isReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func (cv *convergence) markCreated(name string, at time.Time) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.created[name] = at
}

func (cv *convergence) markReady(name string, at time.Time) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if _, ok := cv.ready[name]; ok {
		return
	}
	cv.ready[name] = at
	if len(cv.ready) == cv.total {
		close(cv.done)
	}
}

// timeline is the count of converged CRs over time since start, and each CR's latency from
// its creation to Ready.
func (cv *convergence) timeline(start time.Time) (points []point, latencies []time.Duration) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	for name, at := range cv.ready {
		points = append(points, point{T: at.Sub(start).Seconds()})
		if c, ok := cv.created[name]; ok {
			latencies = append(latencies, at.Sub(c))
		}
	}
	sortPoints(points)
	return points, latencies
}
