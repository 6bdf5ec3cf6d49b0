package run

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run/candidate"
	"github.com/orkspace/ork/internal/run/inflight"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/run/relatedwatch"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/run/suspensions"
	"github.com/orkspace/ork/internal/run/targetpass"
	"github.com/orkspace/ork/internal/target"
)

// A released bucket's CRs are forgotten by every feature that remembers something per CR,
// and only they: the ledger's memos, the suspensions, the related references, the
// candidate's memory (its warned pins here; run/candidate tests the rest), the operations
// counted in flight.
func TestForgetObjectsFansOutToEveryFeature(t *testing.T) {
	m := NewMetrics()
	cms := schema.GroupResource{Resource: "configmaps"}
	c := &controller{e: (&Engine{opts: Options{Metrics: m}}).useRing(leadership.New(leadership.Options{}), nil), ledger: keyledger.New(), suspended: suspensions.New(nil), related: newTestRelatedWatch(t), cand: newTestCandidate(t), cfg: crdConfig{crd: &katalog.CRD{Name: "app"}}}
	var inFlight int
	c.ops = inflight.New(func(n int) { inFlight = n }, func(string, time.Duration) {})
	set := spokes.New(nil, nil)
	c.targets = targetpass.New(targetpass.Deps{Set: set})
	ctx := t.Context()
	for _, cr := range []struct {
		key string
		uid types.UID
	}{{"ns/gone", "u-gone"}, {"ns/kept", "u-kept"}} {
		c.ledger.MarkFinalized(cr.key, cr.uid)
		c.ledger.FirstPass(cr.key, cr.uid)
		c.suspended.Set(ctx, cr.key, cr.uid, true)
		c.suspended.MarkResumed(ctx, cr.key, cr.uid, time.Now())
		c.related.Record(cr.key, cr.uid, []related.Target{{Resource: cms, Ref: related.Ref{Namespace: "ns", Name: "shared"}}})
		c.ops.Note(cr.key, cr.uid, inflight.Step{Next: &operation.State{ID: "op", StartedAt: time.Now()}, Wrote: true}, time.Now())
		set.Use(cr.key, cr.uid, target.Ref{Namespace: "ns", Name: "spoke", Key: "kubeconfig"})
		if _, warn := c.cand.SideOf(badPin(cr.uid)); !warn {
			t.Fatalf("%s: a pin naming no side is not warned about", cr.key)
		}
	}
	c.forgetObjects(func(uid types.UID) bool { return uid == "u-gone" })

	affected := c.related.Readers(related.Change{Resource: cms, Namespace: "ns", Name: "shared"})
	for _, tc := range []struct {
		what       string
		gone, kept bool
	}{
		{"ledger finalized mark", c.ledger.Finalized("ns/gone", "u-gone"), c.ledger.Finalized("ns/kept", "u-kept")},
		{"ledger first pass run", !c.ledger.FirstPass("ns/gone", "u-gone"), !c.ledger.FirstPass("ns/kept", "u-kept")},
		{"suspension", suspendedAt(c, "ns/gone", "u-gone"), suspendedAt(c, "ns/kept", "u-kept")},
		{"resume mark", !c.suspended.ResumedAt("ns/gone", "u-gone").IsZero(), !c.suspended.ResumedAt("ns/kept", "u-kept").IsZero()},
		{"related references", slices.Contains(affected, "ns/gone"), slices.Contains(affected, "ns/kept")},
		{"candidate's warned pin", pinRemembered(c.cand, "u-gone"), pinRemembered(c.cand, "u-kept")},
		{"operation in flight", opHeld(c.ops, "ns/gone"), opHeld(c.ops, "ns/kept")},
		{"target used", spokeUser(set, "u-gone"), spokeUser(set, "u-kept")},
	} {
		if tc.gone || !tc.kept {
			t.Errorf("%s: forgotten CR remembered = %v, other CR remembered = %v; want false, true", tc.what, tc.gone, tc.kept)
		}
	}
	if inFlight != 1 {
		t.Errorf("ork_operations_in_flight = %d after the forget, want 1", inFlight)
	}
}

// suspendedAt reports whether c remembers key's CR uid suspended at its last pass: a pass
// whose context has ended reads that and changes nothing.
func suspendedAt(c *controller, key string, uid types.UID) bool {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	was, _ := c.suspended.Set(ended, key, uid, true)
	return was
}

func spokeUser(s *spokes.Set, uid types.UID) bool {
	_, ok := s.OwnerKey(uid)
	return ok
}

func opHeld(b *inflight.Book, key string) bool {
	_, ok := b.Get(key)
	return ok
}

// newTestRelatedWatch is a related watch of one ConfigMap entry, built without discovery.
func newTestRelatedWatch(t *testing.T) *relatedwatch.Watch {
	t.Helper()
	w, err := relatedwatch.New([]katalog.Related{{As: "shared", Kind: "ConfigMap", Name: "shared"}}, relatedwatch.Deps{},
		func(katalog.Related) (schema.GroupVersionResource, error) {
			return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, nil
		}, func(schema.GroupVersionResource) (bool, error) { return true, nil })
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newTestCandidate is a canary candidate at its first step; its endpoint is never called.
func newTestCandidate(t *testing.T) *candidate.Candidate {
	t.Helper()
	remoteSpec := &katalog.Remote{Endpoint: "http://127.0.0.1:1",
		Candidate: &katalog.Candidate{Endpoint: "http://127.0.0.1:1", Mode: string(rollout.ModeCanary)}}
	crd := &katalog.CRD{Name: "app", APITypes: &katalog.APITypes{Group: "t.ork.test", Version: "v1", Kind: "App", Plural: "apps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Remote: remoteSpec}}}
	c, err := candidate.New(crd, candidate.Deps{Metrics: candidate.NewMetrics(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// badPin is a CR of uid whose pin annotation names no side.
func badPin(uid types.UID) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{}
	cr.SetUID(uid)
	cr.SetAnnotations(map[string]string{rollout.PinAnnotation: "neither"})
	return cr
}

// pinRemembered says whether the candidate still remembers warning about the bad pin of uid: a
// forgotten one is warned about again.
func pinRemembered(c *candidate.Candidate, uid types.UID) bool {
	_, warn := c.SideOf(badPin(uid))
	return !warn
}
