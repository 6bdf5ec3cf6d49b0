package leadership

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The write guard: nothing is guarded before the replica leads; while it leads, a write
// goes out only within the renew deadline of the last renewal; past it the Lease counts as
// lost (the run is ended once) and every later write is refused.
func TestLeadershipGuardsWritesByTheRenewDeadline(t *testing.T) {
	t0 := time.Now()
	l := New(Options{Enabled: true, RenewDeadline: 10 * time.Second})
	if err := l.mayWrite(t0); err != nil {
		t.Errorf("before leading: %v, want writes allowed (preflight, CRD install)", err)
	}
	var losses atomic.Int32
	lose := func() { losses.Add(1) }
	l.onLoss.Store(&lose)
	l.armed.Store(true)
	l.renewed(t0)
	if err := l.mayWrite(t0.Add(9 * time.Second)); err != nil {
		t.Errorf("9s after a renewal: %v, want allowed", err)
	}
	for range 3 {
		if err := l.mayWrite(t0.Add(11 * time.Second)); !errors.Is(err, ErrNotLeader) {
			t.Errorf("11s after a renewal: %v, want ErrNotLeader", err)
		}
	}
	if n := losses.Load(); n != 1 {
		t.Errorf("the run was ended %d times, want once", n)
	}
	l.renewed(t0.Add(11 * time.Second))
	if err := l.mayWrite(t0.Add(12 * time.Second)); !errors.Is(err, ErrNotLeader) {
		t.Errorf("after the loss: %v, want every write refused even after a late renewal", err)
	}
}

// The guard sits under client-go: a write that passed ork's own check but is sent later
// (client-go's retries, the Event broadcaster) is refused per request, reads are not, and
// the caller can tell the refusal from an apiserver error.
func TestGuardTransportRefusesWritesOfAStaleLeader(t *testing.T) {
	var writes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"}}`))
	}))
	defer srv.Close()
	l := New(Options{Enabled: true, RenewDeadline: time.Second})
	l.armed.Store(true)
	l.renewed(time.Now().Add(-time.Minute))
	cfg := &rest.Config{Host: srv.URL}
	cfg.Wrap(l.Transport)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cms := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
	if _, err := cms.Get(context.Background(), "a", metav1.GetOptions{}); err != nil {
		t.Errorf("a read of a stale leader: %v, want allowed", err)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	_, err = cms.Create(context.Background(), cm, metav1.CreateOptions{})
	if !errors.Is(err, ErrNotLeader) {
		t.Errorf("a create of a stale leader: %v, want ErrNotLeader", err)
	}
	if n := writes.Load(); n != 0 {
		t.Errorf("%d writes reached the apiserver, want none", n)
	}
}

// Lose, what a refused write amounts to, closes the guard for every key from then on, even
// on a replica the elector never armed; guard is MayWrite as a predicate.
func TestLoseClosesTheGuardForEveryKey(t *testing.T) {
	l := New(Options{Enabled: true, RenewDeadline: time.Second})
	if !l.guard("ns/a") || l.IsLeader() {
		t.Fatalf("before leading: guard %v, leader %v; want writes allowed, not the leader", l.guard("ns/a"), l.IsLeader())
	}
	l.Lose()
	for _, key := range []string{"ns/a", "other/b", "cluster-scoped"} {
		if l.guard(key) || !errors.Is(l.MayWrite(key), ErrNotLeader) {
			t.Errorf("after Lose: guard(%s) = %v, MayWrite = %v; want refused with ErrNotLeader", key, l.guard(key), l.MayWrite(key))
		}
	}
}

// The elector may give up (OnStoppedLeading, marking the Lease lost) before the run has
// armed its end: the run must still end at once with ErrLost, not go on refusing every
// write while IsLeader says it leads.
func TestALossBeforeTheRunIsArmedEndsIt(t *testing.T) {
	l := New(Options{Enabled: true, RenewDeadline: time.Second})
	leaderCtx, stopLeading := context.WithCancel(context.Background())
	stopLeading()
	l.lose() // OnStoppedLeading, before lead stored its onLoss
	ended := make(chan bool, 1)
	go func() {
		_, lost := l.lead(context.Background(), leaderCtx, func(ctx context.Context) error {
			// The slack: a run that ends does so at once; 5s is only the bound of a wrong one.
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			return nil
		})
		ended <- lost
	}()
	if lost := <-ended; !lost {
		t.Errorf("the run was not ended as lost (it ran out its 5s), want ErrLost at once")
	}
	if l.IsLeader() {
		t.Errorf("IsLeader after a loss, want false")
	}
}
