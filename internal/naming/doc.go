// Package naming is the table, in code, of every name ork writes into a cluster: labels,
// annotations, the finalizer, the field manager, and the names of its Leases, ConfigMaps and
// install objects. docs/naming.md is the same table for users; a test keeps the two in step.
//
// Names already in use stay as they are for ever: renaming one would strand finalizers and
// unprotect objects. The package imports nothing from the repository, so that a pure
// generator (bundle, rbacgen, planner) can name what the engine writes without depending on
// the engine or the shard ring.
package naming
