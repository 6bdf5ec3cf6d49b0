package run

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/runplan"
)

// reasonNotCalled is the plan's reason for a custom resource being deleted that a dry run
// does not call the reconciler for.
const reasonNotCalled = "BeingDeleted"

// dryRunner is ork run --dry-run: what each pass would change is collected and handed to
// Options.OnPlan. The writes themselves are the dry run's writers, chosen once per
// controller (dryCRWrites, and childwrite's for the children): each is a server-side dry
// run that notes its change here and is remembered nowhere. Without Watch, the run ends once
// every custom resource that existed when the caches synced has had its pass.
type dryRunner struct {
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

func newDryRunner(opts Options, crds int) *dryRunner {
	if !opts.DryRun {
		return nil
	}
	return &dryRunner{watch: opts.Watch, includeDeletes: opts.IncludeDeletes, onPlan: opts.OnPlan,
		changes: map[string][]runplan.Change{}, expected: map[string]map[string]bool{}, crds: crds, done: make(chan struct{})}
}

// oneShot reports a dry run that ends after one pass over every custom resource: no
// requeue, backoff or resync is scheduled.
func (r *dryRunner) oneShot() bool { return r != nil && !r.watch }

// allDone is closed once every expected key has passed; nil (never) when there is no end.
func (r *dryRunner) allDone() <-chan struct{} {
	if !r.oneShot() {
		return nil
	}
	return r.done
}

// expect records the keys of one CRD whose caches synced: each is to pass once.
func (r *dryRunner) expect(crd string, keys []string) {
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

// passed marks one key's pass over.
func (r *dryRunner) passed(crd, key string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.expected[crd], key)
	r.checkDone()
}

func (r *dryRunner) checkDone() {
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

// note records a change the pass over the CR of key would make.
func (c *controller) note(cr metav1.Object, ch runplan.Change) {
	r := c.e.dry
	if r == nil {
		return
	}
	k := c.cfg.crd.Name + "\x00" + kobj.KeyOf(cr)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes[k] = append(r.changes[k], ch)
}

// emitPlan hands the pass's plan to OnPlan.
func (c *controller) emitPlan(in input, d decision) {
	r := c.e.dry
	if r == nil {
		return
	}
	k := c.cfg.crd.Name + "\x00" + in.key
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
	r.onPlan(runplan.CR{CRD: c.cfg.crd.Name, Namespace: in.cr.GetNamespace(), Name: in.cr.GetName(), Trigger: string(in.trigger),
		Deleting: in.deleting, Suspended: d.reason == ReasonSuspended, Called: d.reason != reasonNotCalled && !d.quiet && c.cfg.crd.IsRemote(), Result: d.result,
		Success: d.success, Reason: d.reason, Message: d.message, Changes: changes})
}

// skipDelete is the decision of a dry-run pass over a custom resource being deleted: shown,
// not called, unless IncludeDeletes. ok is false when the pass runs as usual.
func (c *controller) skipDelete(in input) (decision, bool) {
	if c.e.dry == nil || !in.deleting || c.e.dry.includeDeletes {
		return decision{}, false
	}
	return decision{success: true, action: actionDone, reason: reasonNotCalled,
		message: "being deleted: not called (--include-deletes calls the reconciler)"}, true
}

// statusFields names the fields a status patch would write, for the plan.
func statusFields(patch map[string]any) []string {
	st, _ := patch["status"].(map[string]any)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(st)) {
		out = append(out, fmt.Sprintf("status.%s", childwrite.PathKey(k)))
	}
	return out
}
