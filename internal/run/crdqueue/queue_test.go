package crdqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orkspace/ork/internal/lanequeue"
)

func TestKeyNamespace(t *testing.T) {
	for key, want := range map[string]string{"ns/a": "ns", "a": "", "ns/": "ns"} {
		if got := keyNamespace(key); got != want {
			t.Errorf("keyNamespace(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestNamespaceDepthSeriesAreCappedAndRemovedAtZero: namespaces with keys have a series, up
// to the cap; the rest are summed under "(other)"; a namespace left with none loses its series.
func TestNamespaceDepthSeriesAreCappedAndRemovedAtZero(t *testing.T) {
	m := NewMetrics()
	q := New("app", time.Millisecond, time.Second, m, nil)
	defer q.ShutDown()
	for i := range maxNamespaceSeries + 10 {
		q.Add(fmt.Sprintf("ns-%03d/a", i))
		q.Add(fmt.Sprintf("ns-%03d/b", i))
	}
	if n := testutil.CollectAndCount(m.lanes.namespace); n != maxNamespaceSeries+1 {
		t.Fatalf("%d namespace series, want %d and (other)", n, maxNamespaceSeries)
	}
	if v := testutil.ToFloat64(m.lanes.namespace.WithLabelValues("app", otherNamespaces)); v != 20 {
		t.Fatalf("(other) depth = %v, want 20 (10 namespaces of 2 keys)", v)
	}
	if v := testutil.ToFloat64(m.lanes.depth.WithLabelValues("app", "slow")); v != 2*(maxNamespaceSeries+10) {
		t.Fatalf("slow depth = %v", v)
	}
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
	}
	if n := testutil.CollectAndCount(m.lanes.namespace); n != 0 {
		t.Fatalf("%d namespace series left with an empty queue, want 0", n)
	}
	if n := testutil.CollectAndCount(m.lanes.wait); n != 1 {
		t.Fatalf("%d wait series, want the slow lane's only", n)
	}
}

// TestRetryKeepsTheLaneOfTheFailedPass: KeepLane during a fast pass makes its rate-limited
// retry fast; during a slow pass, slow.
func TestRetryKeepsTheLaneOfTheFailedPass(t *testing.T) {
	for _, lane := range []lanequeue.Lane{lanequeue.Fast, lanequeue.Slow} {
		t.Run(lane.String(), func(t *testing.T) {
			q := New("app", 0, 0, NewMetrics(), nil)
			defer q.ShutDown()
			if lane == lanequeue.Fast {
				q.MarkFast("ns/a")
			}
			q.Add("ns/a")
			k, _ := q.Get()
			q.KeepLane(k)
			q.Add(k) // the retry, while the pass still runs
			q.Done(k)
			if got := q.lanes.Depth(lane); got != 1 {
				t.Fatalf("%s depth after the retry = %d, want 1", lane, got)
			}
		})
	}
}

// TestEachTargetTakesItsOwnTurn: the keys of one namespace whose children are on a busy
// target do not hold back those of the same namespace on another cluster, nor the other way
// round; the namespace's depth still counts them all.
func TestEachTargetTakesItsOwnTurn(t *testing.T) {
	busy := func(key string) string {
		if strings.HasPrefix(key, "ns/far-") {
			return "orkestra-system/spoke[kubeconfig]"
		}
		return ""
	}
	m := NewMetrics()
	q := New("app", time.Millisecond, time.Second, m, busy)
	defer q.ShutDown()
	for i := range 50 {
		q.Add(fmt.Sprintf("ns/far-%02d", i))
	}
	q.Add("ns/near")
	if v := testutil.ToFloat64(m.lanes.namespace.WithLabelValues("app", "ns")); v != 51 {
		t.Errorf("namespace depth = %v, want 51: the namespace counts the keys of every target", v)
	}
	var order []string
	for range 2 {
		k, _ := q.Get()
		order = append(order, k)
		q.Done(k)
	}
	if !slices.Contains(order, "ns/near") {
		t.Errorf("the first two takes = %v, want the hub's key among them (one turn per target)", order)
	}
}

// takes takes n keys, each done at once, and counts them by what of returns.
func takes(q *Queue, n int, of func(key string) string) map[string]int {
	got := map[string]int{}
	for range n {
		k, _ := q.Get()
		got[of(k)]++
		q.Done(k)
	}
	return got
}

// TestANamespaceOverManyTargetsTakesOneTurn: namespaces take turns first, their targets
// second. A namespace whose keys are spread over three targets takes as many turns as a
// namespace whose keys are all on the hub, not three times as many.
func TestANamespaceOverManyTargetsTakesOneTurn(t *testing.T) {
	spread := func(key string) string {
		if ns, name, _ := strings.Cut(key, "/"); ns == "spread" {
			return "orkestra-system/" + name[:2] + "[kubeconfig]" // t0, t1, t2
		}
		return ""
	}
	q := New("app", time.Millisecond, time.Second, NewMetrics(), spread)
	defer q.ShutDown()
	for i := range 30 {
		q.Add(fmt.Sprintf("spread/t%d-%02d", i%3, i))
		q.Add(fmt.Sprintf("local/cr-%02d", i))
	}
	if got := takes(q, 20, keyNamespace); got["spread"] != 10 || got["local"] != 10 {
		t.Errorf("the first 20 takes by namespace = %v, want 10 each", got)
	}
}

// TestABusyTargetDoesNotStarveAnotherOfItsNamespace: within a namespace, a target with a
// backlog takes one turn in each round, another target (and the hub) theirs.
func TestABusyTargetDoesNotStarveAnotherOfItsNamespace(t *testing.T) {
	targetOf := func(key string) string {
		_, name, _ := strings.Cut(key, "/")
		switch {
		case strings.HasPrefix(name, "busy-"):
			return "orkestra-system/busy[kubeconfig]"
		case strings.HasPrefix(name, "calm-"):
			return "orkestra-system/calm[kubeconfig]"
		}
		return ""
	}
	q := New("app", time.Millisecond, time.Second, NewMetrics(), targetOf)
	defer q.ShutDown()
	for i := range 100 {
		q.Add(fmt.Sprintf("ns/busy-%03d", i))
	}
	for i := range 3 {
		q.Add(fmt.Sprintf("ns/calm-%d", i))
		q.Add(fmt.Sprintf("ns/hub-%d", i))
	}
	got := takes(q, 9, targetOf)
	for _, tg := range []string{"orkestra-system/busy[kubeconfig]", "orkestra-system/calm[kubeconfig]", ""} {
		if got[tg] != 3 {
			t.Errorf("the first 9 takes by target = %v, want 3 each", got)
			break
		}
	}
}

// TestTheTargetRunsOutOfTheQueueLocks: the target func (a template's render, the spokes'
// lock) runs at the add, not under client-go's lock: one that calls back into the queue
// does not deadlock it.
func TestTheTargetRunsOutOfTheQueueLocks(t *testing.T) {
	var q *Queue
	q = New("app", time.Millisecond, time.Second, NewMetrics(), func(string) string {
		_ = q.Len() // client-go's lock: held here, this would never return
		return "orkestra-system/spoke[kubeconfig]"
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Add("ns/a")
		q.Add("ns/a") // a touch
		k, _ := q.Get()
		q.Add(k) // during the pass: pushed at Done
		q.Done(k)
	}()
	select {
	case <-done:
		q.ShutDown() // not on a deadlock: it would wait for the lock too
	case <-time.After(10 * time.Second): // a deadlock, not a slow machine: the adds take microseconds
		t.Fatal("the queue deadlocked: the target func ran under its lock")
	}
}
