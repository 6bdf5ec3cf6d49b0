package run

import "k8s.io/apimachinery/pkg/types"

// forgetObjects drops what c remembers of the CRs for which gone is true. Their bucket moved
// to another replica (a take or a release), which may write them meanwhile: what this
// replica knew of them is stale by the time it takes them back. This is the one list of
// that memory; a feature that remembers something per CR adds itself here.
//   - The ledger's per-object memos: what applying the last answer did, the finalized and
//     removed marks, ork's last status write, the first pass run (skipUnchanged: the take's
//     pass may skip its call). Pending triggers stay: a take passes every CR of the bucket
//     anyway.
//   - Suspensions and resume marks: ork_suspended_crs counts the held buckets' CRs only.
//   - The related index's references: a change of an object they read must not queue
//     them here (and a pass still in flight records none: relatedwatch.Deps.Owns).
//   - The candidate's warned pins, divergence log and waiting shadow calls.
//   - The operations counted in flight (the next holder reads them off the CR).
//   - The targets their passes went to (run/targetpass): a target none of the held CRs uses
//     has its spoke stopped.
//
// Not here, and why: the write book forgets a child's record when the child leaves the child
// cache (onChild), which a released bucket's children do with the next holding; the
// shard pass notes go with the CR cache (forgetPass); the rollout state is per CRD, not
// per CR.
func (c *controller) forgetObjects(gone func(types.UID) bool) {
	c.ledger.ForgetObjects(gone)
	c.forgetSuspensions(gone)
	c.related.ForgetObjects(gone)
	c.ops.Forget(func(_ string, uid types.UID) bool { return gone(uid) })
	c.targets.Forget(func(_ string, uid types.UID) bool { return gone(uid) })
	if c.cand != nil {
		c.cand.ForgetObjects(gone)
	}
}
