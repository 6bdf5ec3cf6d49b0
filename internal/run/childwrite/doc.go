// Package childwrite carries out a pass's answer on a custom resource's children: it plans
// them (all or nothing), checks ownership under per-child locks, creates or server-side
// applies each with uid and resourceVersion preconditions, hands a created child's fields
// over to ork's apply entry, prunes what the answer no longer lists and deletes a
// declarative onDelete block. Its Book remembers ork's own writes for the whole engine, so
// that an informer event can tell ork's write coming back from someone else's change.
//
// It knows its controller only through Deps: clients, the shared Book and Locks, the fence,
// the child caches and a few callbacks (the ledger's onDelete memo, the dry run's plan).
// Deps.DryRun picks once what its writes send and what follows them (effects.go): the
// write functions never ask which mode they run in.
// A failed write is an *Error whose Reason the engine puts on its condition and Event
// (docs/architecture.md).
package childwrite
