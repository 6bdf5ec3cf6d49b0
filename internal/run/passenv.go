package run

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/relatedwatch"
)

// passEnv is what a reconciler may use of its controller during a pass: reads for the
// request, the write fence, Events. A reconciler never holds the controller. Only newPassEnv
// builds one, whole.
type passEnv struct {
	// dryRun is ork run --dry-run: the request says so, and nothing is shadowed.
	dryRun bool
	// children are the CR's children as the caches hold them (payload.children).
	children func(cr *unstructured.Unstructured) map[string]map[string]map[string]any
	// lastApply is what applying the CR's last answer did (payload.lastApply).
	lastApply func(key string, uid types.UID) []remote.AppliedResource
	// related reads payload.related; nil without entries.
	related *relatedwatch.Watch
	// mayWrite is the write fence, asked again right before the call.
	mayWrite func(key string, uid types.UID) error
	// event records an Event on the CR.
	event func(cr *unstructured.Unstructured, typ, reason, msg string)
	// operation reads the long-running operation held for the CR (operations.go), and
	// generation is the CR's generation in the cache now (ok false: not there).
	operation  func(ctx context.Context, in input) (held *operation.State, at operation.Where, bad, err error)
	generation func(key string) (int64, bool)
	// callback is the completion callback of the operation id of uid at generation (id
	// "": one the call may start); nil when ork serves none (opcallbacks.go).
	callback func(ctx context.Context, uid types.UID, generation int64, id string) *operation.Callback
	// unchanged is the skip of a first pass whose rendered args are args and whose related
	// objects are related (reconcile.remote.skipUnchanged, skip.go): ok says the call is
	// skipped, and d is the pass's decision. nil when the CRD does not skip, and in a dry run.
	unchanged func(in input, args any, related []prov.Related) (d decision, ok bool)
	// traced says decisions are traced (--debug-decisions): the request's digest is kept,
	// redact applied first.
	traced bool
	redact []dotpath.Path
	// built is set by newPassEnv alone: a zero passEnv (a controller a test put together
	// by hand) is refused before its reconciler runs (safeReconcile), instead of a nil
	// func panicking deep in a pass, where the recover makes it look like the reconciler's bug.
	built bool
}

// newPassEnv is c's environment for its reconciler; newController and the white-box tests
// both build it here, so that no reconciler runs with half of it.
func newPassEnv(c *controller) passEnv {
	env := passEnv{
		dryRun: c.e.dry != nil, children: c.childrenOf, lastApply: c.ledger.LastApply, related: c.related,
		mayWrite: c.e.fence.mayWrite, event: c.event, traced: c.e.trace != nil, redact: c.e.redact,
		operation: c.heldOperation, generation: c.cachedGeneration, callback: c.e.callbackFunc(),
		built: true,
	}
	if c.cfg.skipMaxAge > 0 && c.e.dry == nil {
		env.unchanged = c.skipUnchanged
	}
	return env
}
