// Package shard splits one operator's custom resources among active replicas: the hash space
// of KEP-5866 (FNV-1a 64 of metadata.uid) cut into B buckets, one coordination/v1 Lease per
// bucket and one per replica, and a Manager that takes a fair share of the buckets and
// fences each by its own Lease. Kubernetes is the only consensus: every decision is a Lease
// write with the read's resourceVersion.
//
// The engine wires it so: Manager.HoldsUID is the guard before every endpoint call and
// write for a CR (HoldsAny for writes of no CR); OnTake and OnRelease restart the CR
// informers with Selector(Held()) as ListOptions.ShardSelector and the child informers on
// SlotLabel in SlotValues(Held()), and keep Selector's Matches as a client-side filter (a
// server without the ShardedListAndWatch gate ignores the selector and returns everything);
// Drain stops a bucket's new work and waits for its in-flight calls; every child carries
// SlotLabel: SlotOf(owner uid). Single-leader mode wraps its Lease lock in FenceLeaderLock.
package shard
