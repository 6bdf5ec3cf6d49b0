// Package dryplan collects what ork run --dry-run would change: the changes each pass notes,
// handed over as one plan per pass, and the one-shot run's end once every custom resource
// that existed at the start has had its pass.
package dryplan

import (
	"sync"

	"github.com/orkspace/ork/internal/runplan"
)

// Options configure a Collector.
type Options struct {
	// Watch keeps the run going after the first pass over every custom resource; false ends
	// it there (one shot).
	Watch bool
	// IncludeDeletes calls the reconciler for custom resources being deleted; false shows
	// them without a call.
	IncludeDeletes bool
	// OnPlan receives each pass's plan; nil drops them.
	OnPlan func(runplan.CR)
	// CRDs is how many CRDs have keys to expect before the run can end.
	CRDs int
}

// Collector is a dry run's plan. The writes themselves are the dry run's writers, each a
// server-side dry run that notes its change here and is remembered nowhere. A nil
// Collector is no dry run: its queries answer so, and Expect and Passed do nothing.
type Collector struct {
	watch, includeDeletes bool
	onPlan                func(runplan.CR)

	mu sync.Mutex
	// changes are the pending pass's changes, by CRD and key (one pass per key at a time).
	changes map[string][]runplan.Change
	// expected are the keys still to pass once, by CRD; synced counts the CRDs whose keys
	// are known.
	expected map[string]map[string]bool
	synced   int
	crds     int
	done     chan struct{}
	closed   bool
}

// New returns an empty plan.
func New(o Options) *Collector {
	return &Collector{watch: o.Watch, includeDeletes: o.IncludeDeletes, onPlan: o.OnPlan,
		changes: map[string][]runplan.Change{}, expected: map[string]map[string]bool{}, crds: o.CRDs, done: make(chan struct{})}
}

// OneShot reports a dry run that ends after one pass over every custom resource: no
// requeue, backoff or resync is scheduled.
func (r *Collector) OneShot() bool { return r != nil && !r.watch }

// IncludeDeletes reports whether a custom resource being deleted is passed as usual.
func (r *Collector) IncludeDeletes() bool { return r.includeDeletes }

// AllDone is closed once every expected key has passed; nil (never) when there is no end.
func (r *Collector) AllDone() <-chan struct{} {
	if !r.OneShot() {
		return nil
	}
	return r.done
}

// Expect records the keys of one CRD whose caches synced: each is to pass once.
func (r *Collector) Expect(crd string, keys []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	r.expected[crd] = set
	r.synced++
	r.checkDone()
}

// Passed marks one key's pass over.
func (r *Collector) Passed(crd, key string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.expected[crd], key)
	r.checkDone()
}

func (r *Collector) checkDone() {
	if r.closed || r.synced < r.crds {
		return
	}
	for _, keys := range r.expected {
		if len(keys) > 0 {
			return
		}
	}
	r.closed = true
	close(r.done)
}

// Note records a change the running pass over key of crd would make.
func (r *Collector) Note(crd, key string, ch runplan.Change) {
	k := crd + "\x00" + key
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes[k] = append(r.changes[k], ch)
}

// Emit ends the pass over key of crd: the changes it noted go with plan to OnPlan, and are
// forgotten.
func (r *Collector) Emit(crd, key string, plan runplan.CR) {
	k := crd + "\x00" + key
	r.mu.Lock()
	changes := r.changes[k]
	delete(r.changes, k)
	r.mu.Unlock()
	if r.onPlan == nil {
		return
	}
	if changes == nil {
		changes = []runplan.Change{}
	}
	plan.Changes = changes
	r.onPlan(plan)
}
