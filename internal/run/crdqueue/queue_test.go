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
