// Package decision is the provenance record of one reconcile pass, pure: its id, the compact
// record ork keeps in a custom resource's status.lastDecision, the digest of what the
// reconciler's answer depends on, and the entry of the decision log, which holds references,
// resourceVersions and changed field paths but never a field's value.
package decision
