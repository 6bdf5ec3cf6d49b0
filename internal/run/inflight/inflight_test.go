package inflight

import (
	"testing"
	"time"

	"github.com/orkspace/ork/internal/operation"
)

func has(b *Book, key string) bool {
	_, ok := b.Get(key)
	return ok
}

// The count of operations in flight follows what is held: a key noted held and then seen
// with nothing held (its operation removed by hand, or ended elsewhere) is no longer counted.
func TestOperationsInFlightDropAKeyNoLongerHeld(t *testing.T) {
	var n int
	b := New(func(v int) { n = v }, func(string, time.Duration) {})
	now := time.Now()
	b.Note("ns/a", "u1", Step{Next: &operation.State{ID: "x", StartedAt: now}, Wrote: true}, now)
	if n != 1 || !has(b, "ns/a") {
		t.Fatalf("in flight = %d after a pending answer, want 1", n)
	}
	b.Note("ns/a", "u1", Step{}, now) // a pass that found nothing held
	if n != 0 || has(b, "ns/a") {
		t.Errorf("in flight = %d after a pass that found none held, want 0", n)
	}
}
