// Package shard splits one operator's custom resources among active replicas: the hash space
// of KEP-5866 (FNV-1a 64 of metadata.uid) cut into B buckets, one coordination/v1 Lease per
// bucket and one per replica, and a Manager that takes a fair share of the buckets and
// fences each by its own Lease. Kubernetes is the only consensus: every decision is a Lease
// write with the read's resourceVersion.
package shard
