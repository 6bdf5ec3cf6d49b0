// Package kobj holds the engine's small helpers over Kubernetes objects as its informers
// deliver them: queue keys, tombstone unwrapping, the comparisons that tell an event's news
// from an echo, and JSON value equality. It is a leaf: it knows nothing of the engine
// (docs/architecture.md).
package kobj
