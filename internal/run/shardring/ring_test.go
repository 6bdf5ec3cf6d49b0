package shardring

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orkspace/ork/internal/shard"
)

// fakeMember is a controller as the ring knows it: it counts the keys queued again.
type fakeMember struct {
	mu     sync.Mutex
	queued []string
}

func (*fakeMember) ForgetObjects(func(types.UID) bool) {}
func (m *fakeMember) Requeue(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queued = append(m.queued, key)
}

// Len is how many keys were queued again.
func (m *fakeMember) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queued)
}

// newTestRing is a replica of a ring of two buckets, none taken yet, its one member, and
// the uid of a custom resource of bucket 1.
func newTestRing(t *testing.T) (*Ring, *fakeMember, types.UID) {
	t.Helper()
	const buckets = 2
	s, err := New(Deps{Lease: shard.Options{Client: fake.NewClientset().CoordinationV1(), Namespace: "ns", Name: "ork",
		Member: "p", Buckets: buckets, Log: slog.New(slog.DiscardHandler)}, Metrics: testMetrics()})
	if err != nil {
		t.Fatal(err)
	}
	var uid types.UID
	for uid = uuid.NewUUID(); shard.BucketOf(uid, buckets) != 1; uid = uuid.NewUUID() {
	}
	return s, &fakeMember{}, uid
}

// testMetrics are the ring's metrics, registered nowhere.
func testMetrics() Metrics {
	return Metrics{
		BucketsHeld: prometheus.NewGauge(prometheus.GaugeOpts{Name: "held"}),
		Handoffs:    prometheus.NewCounter(prometheus.CounterOpts{Name: "handoffs"}),
		CRsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "received"}, []string{"crd"}),
		CRsDropped:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dropped"}, []string{"crd"}),
	}
}
