package shardrun_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// skippedOn reads ork_reconcile_skipped_unchanged_total of the widgets from the replica
// serving metrics on addr; 0 before any pass skipped (the series does not exist yet).
func skippedOn(ctx context.Context, addr string) (int, error) {
	v, err := metric(ctx, addr, `ork_reconcile_skipped_unchanged_total{crd="widget"}`)
	if err != nil && strings.Contains(err.Error(), "no sample") {
		return 0, nil
	}
	return int(v), err
}

// recorded waits until every widget's status.lastDecision records its children: what a
// skip trusts.
func (f *fixture) recorded(n int) {
	f.t.Helper()
	testkit.Eventually(f.t, "every widget's decision recorded with its children", 100*time.Millisecond, slack, func(ctx context.Context) (bool, error) {
		list, err := f.dyn.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		done := 0
		for i := range list.Items {
			if d, ok, err := decision.FromStatus(&list.Items[i]); err == nil && ok && d.Children != "" {
				done++
			}
		}
		if done < n || len(list.Items) < n {
			return false, fmt.Errorf("%d of %d widgets recorded", done, n)
		}
		return true, nil
	})
}

// With reconcile.remote.skipUnchanged, a replica that takes the buckets of one killed passes
// their CRs without calling for the unchanged ones: it calls only the CR changed after the
// kill. The taker held every bucket before handing half back to the other replica, so its
// ledger had passed those CRs once already: the hand-back must forget that, or the take's
// passes would not count as first passes and would call every CR.
func TestSkipUnchangedBucketTakenCallsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.remoteOption("skipUnchanged: {maxAge: 1h}")
	const b, n = 4, 40
	want := map[string]string{}
	crs := f.create(n, "1")
	for _, cr := range crs {
		want[cr.GetName()] = "1"
	}
	// Both replicas call the Katalog's endpoint: the record's digest holds reconcile.remote,
	// and another endpoint (f.via's proxy of each replica) is another question, which calls.
	// After the kill every call is a's.
	addrA := testkit.FreeAddr(t)
	f.sharded("a", b, "--metrics-addr="+addrA, "--log-level=debug") // why a pass calls, in the logs of a failure
	f.settled(leaseDuration+slack, b, "a")
	f.waitConverged("every widget reconciled by a", slack, want)
	c := f.sharded("c", b)
	holders := f.settled(2*leaseDuration+slack, b, "a", "c")
	f.recorded(n)

	var ofC []*unstructured.Unstructured
	for _, cr := range crs {
		if holders[shard.BucketOf(cr.GetUID(), b)] == "c" {
			ofC = append(ofC, cr)
		}
	}
	if len(ofC) < 2 {
		t.Fatalf("c's buckets hold %d of the %d widgets: the sample proves nothing", len(ofC), n)
	}
	skipped0, err := skippedOn(t.Context(), addrA)
	if err != nil {
		t.Fatal(err)
	}

	// SIGKILL: c's Leases live on until they expire, and the edit lands meanwhile.
	if err := c.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.Exited()
	killed := len(f.ep.Calls())
	edited := ofC[0].GetName()
	f.setV(edited, "2")
	want[edited] = "2"
	f.settled(leaseDuration+2*jitteredRetry*2+slack, b, "a")
	// Bounded: a's take passes, a call for the edited CR and a skip for each other one.
	testkit.Eventually(t, "a passed each CR of the buckets it took", 100*time.Millisecond, slack, func(ctx context.Context) (bool, error) {
		skipped, err := skippedOn(ctx, addrA)
		if err != nil {
			return false, err
		}
		called := map[string]bool{}
		for _, call := range f.ep.Calls()[killed:] {
			called[call.Key] = true
		}
		if got := skipped - skipped0 + len(called); got < len(ofC) {
			return false, fmt.Errorf("%d skipped and %d called of c's %d CRs", skipped-skipped0, len(called), len(ofC))
		}
		return true, nil
	})
	f.waitConverged("the widget edited after the kill", slack, want)

	calls := map[string]int{}
	total := 0
	for _, call := range f.ep.Calls()[killed:] {
		calls[call.Key]++
		total++
	}
	skipped, err := skippedOn(t.Context(), addrA)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a took c's buckets: %d calls (%v), %d passes skipped, of c's %d CRs", total, calls, skipped-skipped0, len(ofC))
	if calls[f.ns+"/"+edited] == 0 {
		t.Errorf("%s, changed after c was killed, was not called by a", edited)
	}
	for key := range calls {
		if key != f.ns+"/"+edited {
			t.Errorf("%s, unchanged, was called by a after the take", key)
		}
	}
	// The edited CR's call, and a retry a busy machine may cause.
	if total > 2 {
		t.Errorf("a made %d calls after the take, want at most 2", total)
	}
	if skipped-skipped0 < len(ofC)-1 {
		t.Errorf("a skipped %d passes after the take, want %d (c's unchanged CRs)", skipped-skipped0, len(ofC)-1)
	}
}
