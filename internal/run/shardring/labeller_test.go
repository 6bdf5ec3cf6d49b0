package shardring

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The take-time labelling runs one run at a time: the takes that arrive during a run go
// together into the next one, not one goroutine each; and a bucket handed back drops its
// children still waiting to be shown (slotted), since no owner of them is queued here.
func TestTakeLabellingIsSerializedAndCoalesced(t *testing.T) {
	s, c, _ := newTestRing(t)
	s.buckets, s.work, s.takenAt, s.takes = 4, make([]bucketWork, 4), make([]time.Time, 4), make([]uint64, 4)
	runs := make(chan []int)
	release := make(chan struct{})
	var inFlight, most atomic.Int32
	s.Start(t.Context(), Members{Controllers: []Member{c}, SlotChildren: func(_ context.Context, bs []int) map[string]string {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > most.Load() {
			most.Store(n)
		}
		runs <- bs
		<-release
		return nil
	}})

	s.Take(t.Context(), 0)
	// Bounded by the test's own deadline: the labeller starts at once.
	if got := <-runs; fmt.Sprint(got) != "[0]" {
		t.Fatalf("first run labels %v; want [0]", got)
	}
	s.Take(t.Context(), 1)
	s.Take(t.Context(), 2)
	release <- struct{}{}
	if got := <-runs; fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("the takes during the first run: labelled in %v; want one run for [1 2]", got)
	}
	release <- struct{}{}

	s.slotted.Store(types.UID("child-of-3"), 3)
	s.slotted.Store(types.UID("child-of-2"), 2)
	s.Take(t.Context(), 3)
	<-runs
	release <- struct{}{}
	s.Release(3, false)
	if m := most.Load(); m != 1 {
		t.Errorf("%d labelling runs at once; want one at a time", m)
	}
	if _, ok := s.slotted.Load(types.UID("child-of-3")); ok {
		t.Error("bucket 3 handed back: its child waiting to be shown is kept")
	}
	if _, ok := s.slotted.Load(types.UID("child-of-2")); !ok {
		t.Error("bucket 3 handed back: bucket 2's child waiting to be shown went with it")
	}
}
