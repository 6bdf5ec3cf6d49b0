package shardrun_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/testkit"
)

// A hand-back lets the calls in flight finish before the bucket's Lease is released: with
// a reconciler that takes a while, a replica joining under load takes its share from the
// first, no call is cut short, and no two calls for one CR ever overlap (the new holder
// starts only after the old one's calls ended).
func TestHandBackDrainsInFlightCallsBeforeTheNextHolderStarts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var cancelled atomic.Int32
	// A slow reconciler, inside the 5s timeout, and longer than the new holder needs from
	// the release to its first call (its round, then its cache's list again: about 1-2 s).
	const callTime = 3 * time.Second
	f.ep.SetRespond(func(c reconcilertest.Call) reconcilertest.Response {
		select {
		case <-time.After(callTime):
		case <-c.Ctx.Done():
			cancelled.Add(1) // the caller gave up: a pass cut short
		}
		return seenAnswer(c)
	})
	const b, n = 4, 12
	want := map[string]string{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()] = "1"
	}
	f.sharded("a", b, "--endpoint", f.via("a"))
	f.settled(leaseDuration+slack, b, "a")
	// 12 calls of 3 s on 4 workers: about 9 s of work. c joins once a's workers are all in
	// a call, so that the hand-back finds calls in flight.
	f.setAll(want, "2")
	testkit.Eventually(t, "a's 4 workers in a call", 20*time.Millisecond, slack, func(context.Context) (bool, error) {
		inFlight := 0
		for _, c := range f.ep.Calls() {
			if c.End.IsZero() {
				inFlight++
			}
		}
		return inFlight == 4, nil
	})
	f.sharded("c", b, "--endpoint", f.via("c"))
	f.settled(2*leaseDuration+slack, b, "a", "c")
	f.waitConverged("every widget reconciled across the hand-back", time.Duration(n)*callTime+slack, want)
	handedBack := 0
	for _, c := range f.ep.Calls() {
		if c.Header.Get(replicaHeader) == "c" {
			handedBack++
		}
	}
	if handedBack == 0 {
		t.Fatal("c made no call: no bucket was handed over under load")
	}
	// The drain waits up to min(timeout 5 s, 10 s) for them: a 3 s call is never cut short.
	if n := cancelled.Load(); n > 0 {
		t.Errorf("%d calls cut short by the hand-back: it did not let them finish", n)
	}
	for _, o := range f.ep.Overlaps() {
		t.Errorf("overlapping calls for %s: #%d by %s (%s–%s) and #%d by %s from %s", o.Key,
			o.First.Seq, o.First.Header.Get(replicaHeader), o.First.Start.Format("15:04:05.000"), o.First.End.Format("15:04:05.000"),
			o.Second.Seq, o.Second.Header.Get(replicaHeader), o.Second.Start.Format("15:04:05.000"))
	}
}

// The drain waits up to the Katalog's longest remote timeout, not less, bounded by
// --shutdown-timeout: a hand-back and a stop (SIGTERM) let a 12 s call of a 20 s timeout
// finish, so that it never runs on at the reconciler beside the next holder's call.
func TestDrainWaitsUpToTheRemoteTimeout(t *testing.T) {
	t.Parallel()
	f := newFixtureTimeout(t, "20s")
	var cancelled atomic.Int32
	const callTime = 12 * time.Second
	f.ep.SetRespond(func(c reconcilertest.Call) reconcilertest.Response {
		obj, _ := c.Body["object"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		if spec["v"] != "1" {
			select {
			case <-time.After(callTime):
			case <-c.Ctx.Done():
				cancelled.Add(1)
			}
		}
		return seenAnswer(c)
	})
	const b, n = 4, 4
	want := map[string]string{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()] = "1"
	}
	a := f.sharded("a", b, "--endpoint", f.via("a"))
	f.settled(leaseDuration+slack, b, "a")
	f.waitConverged("every widget reconciled", slack, want)
	allInFlight := func(what string) {
		testkit.Eventually(t, what, 20*time.Millisecond, slack, func(context.Context) (bool, error) {
			inFlight := 0
			for _, c := range f.ep.Calls() {
				if c.End.IsZero() {
					inFlight++
				}
			}
			return inFlight == n, nil
		})
	}

	f.setAll(want, "2")
	allInFlight("a's calls of v=2 in flight")
	f.sharded("c", b, "--endpoint", f.via("c"))
	f.settled(2*leaseDuration+callTime+slack, b, "a", "c")
	f.waitConverged("every widget reconciled across the hand-back", 2*callTime+slack, want)
	if n := cancelled.Swap(0); n > 0 {
		t.Errorf("%d calls cut short by the hand-back: the drain did not wait for the remote timeout", n)
	}

	f.setAll(want, "3")
	allInFlight("the calls of v=3 in flight")
	if _, err := a.Terminate(2 * callTime); err != nil {
		t.Fatalf("a stopped: %v", err)
	}
	if n := cancelled.Load(); n > 0 {
		t.Errorf("%d calls cut short by a stop: the drain did not wait for the remote timeout", n)
	}
	f.waitConverged("every widget reconciled after a stopped", 2*callTime+slack, want)
	for _, o := range f.ep.Overlaps() {
		t.Errorf("overlapping calls for %s: #%d by %s and #%d by %s", o.Key,
			o.First.Seq, o.First.Header.Get(replicaHeader), o.Second.Seq, o.Second.Header.Get(replicaHeader))
	}
}
