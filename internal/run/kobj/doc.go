// Package kobj holds the engine's small helpers over Kubernetes objects as its informers
// deliver them: queue keys, tombstone unwrapping, the comparisons that tell an event's news
// from an echo, JSON value equality, and the label patch every labelling sends. It is a
// leaf: it knows nothing of the engine (docs/architecture.md).
package kobj
