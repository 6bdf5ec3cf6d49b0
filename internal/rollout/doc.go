// Package rollout holds the pure rules of rolling out a candidate reconciler next to the
// stable one (reconcile.remote.candidate): which CRs form the canary slice, how two answers
// diverge, when the gate holds or fails, how a rollout steps, and how its progress is kept in
// the `<name>-rollout` ConfigMap so that it survives a restart. No client calls: the engine
// sends the requests and writes the ConfigMap; this package decides.
package rollout
