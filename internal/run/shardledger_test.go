package run

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/shard"
)

// A bucket that moves to another replica and comes back carries nothing of its CRs' earlier
// passes here: the other replica may have applied meanwhile, so prepared.lastApply (what
// applying the object's last answer did) and the finalized, removed and status-write marks
// are dropped with its take. Another bucket's memory stays, and so do pending triggers.
func TestTakenBackBucketForgetsItsCRsLedgerMemory(t *testing.T) {
	c, s, _, cr := newShardedController(t)
	s.Start(t.Context(), shardring.Members{Controllers: []shardring.Member{ringMember{c}}})
	other := uuid.NewUUID()
	for shard.BucketOf(other, s.Buckets()) != 0 {
		other = uuid.NewUUID()
	}
	mine, theirs := cr.GetUID(), other
	x := []remote.AppliedResource{{Kind: "ConfigMap", Name: "x", Outcome: "created"}}
	remember := func(key string, uid types.UID) {
		c.ledger.SetLastApply(key, uid, x)
		c.ledger.MarkFinalized(key, uid)
		c.ledger.MarkRemoved(key, uid)
		c.ledger.WroteStatus(key, uid, "9")
	}

	s.Take(t.Context(), 1)
	remember("ns/w", mine)
	remember("ns/o", theirs)
	c.ledger.Note("ns/pending", TriggerUpdate)
	c.ledger.SetLastApply("ns/pending", mine, x)
	c.ledger.ResyncAfter("ns/resync", time.Now(), time.Minute)
	c.ledger.SetLastApply("ns/resync", mine, x)
	s.Release(1, true) // bucket 1 is lost to another replica, which applies Y
	if c.ledger.ResyncDue("ns/resync").IsZero() {
		t.Error("released: a record with a resync due went with the bucket's memory; want the resync kept")
	}
	// A pass cancelled by the loss ends after it, and records its apply.
	remember("ns/w", mine)
	s.Take(t.Context(), 1)

	if got := c.ledger.LastApply("ns/w", mine); got != nil {
		t.Errorf("taken back: prepared.lastApply %v, the answer applied before the bucket moved; want none", got)
	}
	if c.ledger.Finalized("ns/w", mine) || c.ledger.Removed("ns/w", mine) {
		t.Error("taken back: the finalized or removed mark of before the move is kept")
	}
	if uid, rv := c.ledger.StatusWrite("ns/w"); uid != "" || rv != "" {
		t.Errorf("taken back: ork's status write of before the move is kept (%s, %s)", uid, rv)
	}
	if got := c.ledger.LastApply("ns/o", theirs); len(got) != 1 || !c.ledger.Finalized("ns/o", theirs) {
		t.Errorf("another bucket's memory went: lastApply %v", got)
	}
	if tr, _, ok := c.ledger.Begin("ns/pending", time.Now()); !ok || tr != TriggerUpdate {
		t.Errorf("a pending trigger went with the move: %q, %v", tr, ok)
	}
}
