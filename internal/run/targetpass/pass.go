package targetpass

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/target"
)

// cleanupPoll is how soon a deleting CR looks again at its children on the target.
const cleanupPoll = 500 * time.Millisecond

// CR is one pass's custom resource as the engine lends it to the target pass: the object as
// the pass's writes left it, and the writes to it that only the engine makes.
type CR interface {
	Key() string
	Object() *unstructured.Unstructured
	// SetFinalizer writes naming.TargetCleanupFinalizer on or off the CR; stop says the pass
	// ends there (the CR was deleted, or is being deleted, meanwhile).
	SetFinalizer(ctx context.Context, present bool) (stop bool, err error)
	// RecordBase is the CR whose status the record is read from: the cached one, or a fresh
	// read when the cache is behind ork's own last status write (whose record it may lack);
	// nil when it is gone or replaced.
	RecordBase(ctx context.Context) (*unstructured.Unstructured, error)
	// WriteStatus sends patch, a merge patch of the status record, as the engine writes a
	// CR's status; the CR becomes the written object.
	WriteStatus(ctx context.Context, patch map[string]any) error
}

// Pass is where one pass writes the CR's children: the hub, or a target.
type Pass struct {
	// Target is the cluster the CR's children are in (zero: the hub), named even when the
	// pass goes no further, and for a CR gone.
	Target target.Ref
	// Ref is the target this pass writes to, and Spoke its writer; zero and nil for the hub
	// (the clean-up sweeps the spoke).
	Ref   target.Ref
	Spoke *childwrite.Writer
}

// Outcome is why the target pass ends a pass.
type Outcome int

const (
	// Unreachable: the target does not answer; tried again when its breaker lets the next
	// try through, without holding a worker meanwhile.
	Unreachable Outcome = iota
	// Invalid: the CR's target does not render (a field it lacks).
	Invalid
	// Waiting: a deleting CR's children on its targets are still going.
	Waiting
)

// Verdict is how the target pass ends a pass: its Outcome, a message, and when to look
// again (none for Invalid).
type Verdict struct {
	Outcome Outcome
	After   time.Duration
	Message string
}

// Resolve resolves cr's target. A failure the pass reports is a Verdict (the target does not
// render, is unreachable); an error is a failed finalizer write or a lost fence. A CR with a
// target other than the hub gets naming.TargetCleanupFinalizer first, before any of its
// children is written there.
func (t *Targets) Resolve(ctx context.Context, cr CR, deleting, gone bool) (Pass, *Verdict, error) {
	var p Pass
	if t.off() {
		return p, nil, nil
	}
	ref, err := target.Resolve(t.d.Set.Template, cr.Object().Object)
	if gone {
		// Its delete call still names the cluster; nothing is written there any more (its
		// children went before it did).
		if err == nil {
			p.Target = ref
		}
		return p, nil, nil
	}
	if err != nil {
		return p, &Verdict{Outcome: Invalid, Message: fmt.Sprintf("target: %v", err)}, nil
	}
	t.release(t.d.Set.Use(cr.Key(), cr.Object().GetUID(), ref))
	if ref.Local() {
		return p, nil, nil
	}
	p.Target = ref
	if !deleting {
		if stop, err := cr.SetFinalizer(ctx, true); err != nil || stop {
			return p, nil, err
		}
	}
	if ok, why := t.d.Pool.Reachable(ref); !ok {
		return p, t.unreachable(ref, why), nil
	}
	if !t.d.Pool.StateOf(ref).Reachable {
		// The one try the open breaker lets through is a probe: a pass whose writes all turn
		// out unchanged sends nothing to the target, and would say Ready about a dead one.
		if err := t.d.Pool.Probe(ctx, ref); err != nil {
			return p, t.unreachable(ref, err.Error()), nil
		}
	}
	sp, err := t.spokeFor(ctx, ref)
	if err != nil {
		t.d.Pool.Failed(ref, err)
		return p, t.unreachable(ref, err.Error()), nil
	}
	if !deleting {
		// Recorded before its first child goes there: a later change of target, or its
		// delete, finds them even after a restart (move.go).
		if err := t.recordTarget(ctx, cr, ref); err != nil {
			return p, nil, err
		}
	}
	p.Ref, p.Spoke = ref, sp.Writer
	return p, nil, nil
}

// unreachable is the verdict of a pass whose target does not answer: tried again when the
// breaker lets the next try through.
func (t *Targets) unreachable(ref target.Ref, why string) *Verdict {
	after := max(time.Until(t.d.Pool.StateOf(ref).RetryAt), t.d.MinAfter)
	return &Verdict{Outcome: Unreachable, After: after, Message: fmt.Sprintf("target %s is unreachable: %s", ref, why)}
}

// Written feeds the breaker with what the writes to p's target met: a failure that says the
// target cannot be reached is an Unreachable verdict; wrote is whether a write went through
// (an unchanged child may send nothing, which says nothing).
func (t *Targets) Written(p Pass, err error, wrote bool) *Verdict {
	if p.Spoke == nil {
		return nil
	}
	if err != nil && target.Unreachable(err) {
		t.d.Pool.Failed(p.Ref, err)
		return t.unreachable(p.Ref, err.Error())
	}
	if wrote {
		t.d.Pool.Succeeded(p.Ref)
	}
	return nil
}

// Cleanup deletes a deleting CR's children from its target, and from every target its status
// records as holding some (one it left), and lifts naming.TargetCleanupFinalizer once none
// is left; ork's own finalizer, when the CRD has finalize, goes first (the reconciler's
// delete may want its children). A Waiting verdict asks to look again while children remain.
func (t *Targets) Cleanup(ctx context.Context, cr CR, p Pass) (*Verdict, error) {
	if obj := cr.Object(); !slices.Contains(obj.GetFinalizers(), naming.TargetCleanupFinalizer) || finalizer.Has(obj) {
		return nil, nil
	}
	refs, err := t.held(ctx, cr, p.Ref)
	if err != nil {
		return nil, err
	}
	left := 0
	for _, ref := range refs {
		n, down, err := t.sweep(ctx, cr.Object(), ref, nil)
		if err != nil {
			return nil, err
		}
		if down != "" {
			return t.unreachable(ref, down), nil
		}
		left += n
	}
	if left > 0 {
		return &Verdict{Outcome: Waiting, After: cleanupPoll,
			Message: fmt.Sprintf("waiting for %d children to be deleted on the targets", left)}, nil
	}
	_, err = cr.SetFinalizer(ctx, false)
	return nil, err
}

// spokeFor is the controller's spoke of ref, built (or rebuilt, when the pool's client
// changed: a rotated Secret) with the target's current client, its child caches synced.
func (t *Targets) spokeFor(ctx context.Context, ref target.Ref) (*spokes.Spoke, error) {
	cl, err := t.d.Pool.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	return t.d.Set.For(ctx, ref, cl, func() (*spokes.Spoke, error) { return t.newSpoke(ref, cl) })
}
