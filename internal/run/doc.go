// Package run is ork's reconcile engine. The reconcile decision itself comes from the
// remote reconciler (internal/remote) or the declarative one; what to write for it is
// the planner's (internal/planner), and who may write is leadership's
// (internal/leadership), or, sharded, the ring's (internal/run/shardring, which also
// selects the caches' objects). A custom resource's change goes through four places:
//
//   - informers: the CRD's and its children's caches, whose handlers only enqueue keys
//     (controller.go, informers.go, scope.go; internal/run/informers; related objects in
//     internal/run/relatedwatch);
//   - the queue: a typed rate-limited work queue with a fast and a slow lane, and a ledger of
//     each key's triggers, tombstones and resyncs, every add through one call (enqueue.go,
//     internal/run/crdqueue, internal/run/keyledger);
//   - a pass: one key's reconcile, from the lookup through the call to the decision
//     (reconcile.go, reconcilers.go, suspend.go, finalize.go);
//   - writers: the children (childWrites, built in childwrites.go: internal/run/childwrite,
//     with the write book and the child locks; on another cluster, the target pass's:
//     internal/run/targetpass), the status (status.go) and Events.
//
// Health, metrics, traces and the dry run's plan watch them (health.go, internal/run/metrics,
// tracing.go, dryrun.go). The rules between features (what a moved bucket forgets, in
// forget.go; related watches and sharding; dry run and the write book; suspend and finalize)
// are in docs/architecture.md.
package run
