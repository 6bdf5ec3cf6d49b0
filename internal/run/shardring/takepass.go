package shardring

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/shard"
)

// A sharded replica owes each CR of a bucket it takes one pass. The CR cache lists again
// with every change of the held buckets, but what that relist shows is not the account: a
// bucket handed back and taken back before the cache listed without it keeps its CRs in
// the cache, and the relist shows them unchanged (a sync, no add). So the account is kept
// here: each take of a bucket counts, each CR the cache shows (by an add, an update or a
// relist's sync) notes the count of its bucket's takes, and a CR whose note is behind is
// owed its pass. A CR's note goes when it leaves the cache.

// TakePass notes that the CR of uid is in this replica's CR cache and reports whether it
// is owed its bucket's take pass: true the first time it is seen after each take of its
// bucket, false after that, and false while its bucket is not this replica's.
func (s *Ring) TakePass(uid types.UID) bool {
	b := shard.BucketOf(uid, s.buckets)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.work[b].ctx == nil {
		return false
	}
	if s.passed[uid] == s.takes[b] {
		return false
	}
	s.passed[uid] = s.takes[b]
	return true
}

// owesPass reports, without noting anything, whether the CR of uid would be owed its
// bucket's take pass (a catch-up sends such a CR even when unchanged).
func (s *Ring) owesPass(uid types.UID) bool {
	b := shard.BucketOf(uid, s.buckets)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.work[b].ctx != nil && s.passed[uid] != s.takes[b]
}

// ForgetPass drops the note of a CR that left the CR cache (deleted, or its bucket
// released): a later take owes it a pass anew.
func (s *Ring) ForgetPass(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.passed, uid)
}
