package run

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/relatedwatch"
)

// A released bucket's CRs are forgotten by every feature that remembers something per CR,
// and only they: the ledger's memos, the suspensions, the related references, the
// candidate's warned pins, divergence log and waiting shadow calls.
func TestForgetObjectsFansOutToEveryFeature(t *testing.T) {
	m := NewMetrics()
	cms := schema.GroupResource{Resource: "configmaps"}
	c := &controller{e: &Engine{gate: allMine{}, opts: Options{Metrics: m}}, ledger: newLedger(), suspended: newSuspensions(nil), related: newTestRelatedWatch(t), cand: &candidate{badPins: map[types.UID]bool{}, logged: map[string]loggedPaths{}}, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}}}
	ctx := t.Context()
	for _, cr := range []struct {
		key string
		uid types.UID
	}{{"ns/gone", "u-gone"}, {"ns/kept", "u-kept"}} {
		c.ledger.markFinalized(cr.key, cr.uid)
		c.suspended.set(ctx, cr.key, cr.uid, true)
		c.suspended.markResumed(ctx, cr.key, cr.uid, time.Now())
		c.related.Record(cr.key, cr.uid, []related.Target{{Resource: cms, Ref: related.Ref{Namespace: "ns", Name: "shared"}}})
		c.cand.badPins[cr.uid] = true
		c.cand.logged[cr.key] = loggedPaths{uid: cr.uid, paths: "spec.replicas"}
		if c.cand.waiting == nil {
			c.cand.waiting = map[string]shadowJob{}
		}
		c.cand.waiting[cr.key] = shadowJob{req: remote.Request{Key: cr.key, Object: map[string]any{"metadata": map[string]any{"uid": string(cr.uid)}}}}
		c.cand.order = append(c.cand.order, cr.key)
	}
	c.forgetObjects(func(uid types.UID) bool { return uid == "u-gone" })

	affected := c.related.Readers(related.Change{Resource: cms, Namespace: "ns", Name: "shared"})
	for _, tc := range []struct {
		what       string
		gone, kept bool
	}{
		{"ledger finalized mark", c.ledger.finalized("ns/gone", "u-gone"), c.ledger.finalized("ns/kept", "u-kept")},
		{"suspension", c.suspended.suspended["ns/gone"] != "", c.suspended.suspended["ns/kept"] != ""},
		{"resume mark", !c.suspended.resumedAt("ns/gone", "u-gone").IsZero(), !c.suspended.resumedAt("ns/kept", "u-kept").IsZero()},
		{"related references", slices.Contains(affected, "ns/gone"), slices.Contains(affected, "ns/kept")},
		{"candidate's warned pin", c.cand.badPins["u-gone"], c.cand.badPins["u-kept"]},
		{"candidate's divergence log", c.cand.logged["ns/gone"].uid != "", c.cand.logged["ns/kept"].uid != ""},
		{"candidate's waiting shadow call", slices.Contains(c.cand.order, "ns/gone"), slices.Contains(c.cand.order, "ns/kept") && c.cand.waiting["ns/kept"].req.Key != ""},
	} {
		if tc.gone || !tc.kept {
			t.Errorf("%s: forgotten CR remembered = %v, other CR remembered = %v; want false, true", tc.what, tc.gone, tc.kept)
		}
	}
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
