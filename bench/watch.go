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
	// edit is the one CR whose edit the startup workload times (empty: none).
	edit editWatch
}

// editWatch waits for one CR to be Ready at (at least) one generation.
type editWatch struct {
	name       string
	generation int64
	ready      chan time.Time
}

func watchConvergence(ctx context.Context, c *cluster, total int) (*convergence, error) {
	cv := &convergence{created: map[string]time.Time{}, ready: map[string]time.Time{}, total: total, done: make(chan struct{})}
	seen := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || !isReady(u) {
			return
		}
		cv.markReady(u.GetName(), time.Now())
		cv.checkEdit(u)
	}
	var synced []cache.InformerSynced
	for _, k := range c.w.kinds {
		inf := dynamicinformer.NewFilteredDynamicInformer(c.dyn, crGVR(k.plural), c.ns, 0, cache.Indexers{}, nil).Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) },
		}); err != nil {
			return nil, err
		}
		go inf.Run(ctx.Done())
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
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

// watchEdit arms the wait for name to be Ready with status.observedGeneration at least
// generation; the channel receives when it is seen. Armed before the edit is made.
func (cv *convergence) watchEdit(name string, generation int64) <-chan time.Time {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.edit = editWatch{name: name, generation: generation, ready: make(chan time.Time, 1)}
	return cv.edit.ready
}

func (cv *convergence) checkEdit(u *unstructured.Unstructured) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.edit.ready == nil || u.GetName() != cv.edit.name {
		return
	}
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if og >= cv.edit.generation {
		cv.edit.ready <- time.Now()
		cv.edit.ready = nil
	}
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
