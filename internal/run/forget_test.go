package run

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/related"
)

// A released bucket's CRs are forgotten by every feature that remembers something per CR,
// and only they: the ledger's memos, the suspensions, the related references, the
// candidate's warned pins.
func TestForgetObjectsFansOutToEveryFeature(t *testing.T) {
	m := NewMetrics()
	cms := schema.GroupResource{Resource: "configmaps"}
	c := &controller{e: &Engine{gate: allMine{}, opts: Options{Metrics: m}}, crd: &katalog.CRD{Name: "app"}, ledger: newLedger(),
		suspended: newSuspensions(), related: &relatedWatch{index: related.NewIndex()},
		cand: &candidate{badPins: map[types.UID]bool{}, logged: map[string]string{}}}
	ctx := t.Context()
	for _, cr := range []struct {
		key string
		uid types.UID
	}{{"ns/gone", "u-gone"}, {"ns/kept", "u-kept"}} {
		c.ledger.markFinalized(cr.key, cr.uid)
		c.suspended.set(ctx, cr.key, cr.uid, true)
		c.suspended.markResumed(ctx, cr.key, cr.uid, time.Now())
		c.related.set(cr.key, cr.uid, []related.Target{{Resource: cms, Ref: related.Ref{Namespace: "ns", Name: "shared"}}})
		c.cand.badPins[cr.uid] = true
	}
	c.forgetObjects(func(uid types.UID) bool { return uid == "u-gone" })

	affected := c.related.index.Affected(related.Change{Resource: cms, Namespace: "ns", Name: "shared"})
	for _, tc := range []struct {
		what       string
		gone, kept bool
	}{
		{"ledger finalized mark", c.ledger.finalized("ns/gone", "u-gone"), c.ledger.finalized("ns/kept", "u-kept")},
		{"suspension", c.suspended.suspended["ns/gone"] != "", c.suspended.suspended["ns/kept"] != ""},
		{"resume mark", !c.suspended.resumedAt("ns/gone", "u-gone").IsZero(), !c.suspended.resumedAt("ns/kept", "u-kept").IsZero()},
		{"related references", slices.Contains(affected, "ns/gone"), slices.Contains(affected, "ns/kept")},
		{"candidate's warned pin", c.cand.badPins["u-gone"], c.cand.badPins["u-kept"]},
	} {
		if tc.gone || !tc.kept {
			t.Errorf("%s: forgotten CR remembered = %v, other CR remembered = %v; want false, true", tc.what, tc.gone, tc.kept)
		}
	}
}
