package simulate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/declarative"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
)

// RemoteOptions make simulate call the endpoints of remote CRDs.
type RemoteOptions struct {
	// Endpoint replaces every remote CRD's endpoint; default: each CRD's own.
	Endpoint string
	// HTTPClient makes every call when set (an exchange.Replay as its Transport replays a
	// recording); default: the client ork run builds from the CRD's tls block.
	HTTPClient *http.Client
	// Secrets are Secret manifests standing in for the cluster's, next to those of the CR
	// file (auth.secretRef, tls.caSecretRef); default none.
	Secrets []*unstructured.Unstructured
	// Related are objects payload.related may read, beside the CR file's other documents
	// (--related); default none.
	Related []*unstructured.Unstructured
	// Record gets every exchange when set (exchange.Recorder.Record); default nil.
	Record func(exchange.Exchange)
	// Placeholder answers every Secret read with a placeholder instead of Secrets: for a
	// replay, whose recording holds no token and matches none. Default false.
	Placeholder bool
	// OperationWait bounds the time the run waits, in all, for the operations of "pending"
	// answers, each wait their pollAfter (as ork run bounds it) cut to what is left;
	// default DefaultOperationWait. Polls are cycles, so Options.Cycles bounds them too.
	OperationWait time.Duration
	// Now and Sleep are the run's clock; default the real one.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
}

// placeholder is a SecretSource whose every value is "replay".
type placeholder struct{}

func (placeholder) SecretValue(context.Context, string, string, string) ([]byte, error) {
	return []byte("replay"), nil
}

// remoteCRD reconciles the CRs of one remote CRD as ork run does: the same request
// building (remote.Reconciler), outcome (remote.Decide) and planning (planner), against
// the in-memory cluster.
type remoteCRD struct {
	rec   *remote.Reconciler
	types planner.Types
	// force is the CRD's forceConflict.
	force    *bool
	children bool
	// related are payload.related's entries, found among the in-memory cluster's objects
	// (the CR file's other documents); crds resolves their kinds.
	related []katalog.Related
	crds    []*katalog.CRD
	extra   []*unstructured.Unstructured
	// wait follows operations; one per run, shared by every remote CRD.
	wait *waiter
}

func newRemoteCRD(c *katalog.CRD, set *katalog.Set, seed []*unstructured.Unstructured, o *RemoteOptions, operator string, w *waiter) (*remoteCRD, error) {
	crd := c.WithEndpoint(o.Endpoint)
	var secrets remote.SecretSource = manifest.NewSecrets("the CR file or --secrets", slices.Concat(seed, o.Secrets)...)
	if o.Placeholder {
		secrets = placeholder{}
	}
	rec, err := remote.New(crd, remote.Options{Secrets: secrets, HTTPClient: o.HTTPClient, Record: o.Record})
	if err != nil {
		return nil, fmt.Errorf("CRD %q: remote reconciler: %w", c.Name, err)
	}
	rem := crd.OperatorBox.Reconcile.Remote
	types := planner.NewTypes(c, set.CRDs)
	types.Operator = operator
	return &remoteCRD{rec: rec, types: types, force: c.OperatorBox.Reconcile.ForceConflict,
		children: rem.Payload.Children.Enabled, related: rem.Payload.Related, crds: set.CRDs, extra: o.Related, wait: w}, nil
}

// reconcile runs cycle n for t: one request (trigger create first, then resync, or requeue
// after a requeue answer or to poll an operation, with prepared.operation), then the
// answer's resources applied and its status written; a "pending" answer holds its
// operation on t, as ork run holds it on the custom resource. A failed reconcile is an
// error with ork run's reason; a request the replay has no recording for is that
// NoRecordingError.
func (r *remoteCRD) reconcile(ctx context.Context, cl *cluster, t *target, n int) ([]Change, error) {
	cr := cl.get(t.key)
	trigger := remote.TriggerResync
	switch {
	case n == 1:
		trigger = remote.TriggerCreate
	case t.requeue || t.op != nil:
		trigger = remote.TriggerRequeue
	}
	gen := cr.GetGeneration()
	req := remote.Request{Key: objectKey(cr), Object: cr.DeepCopy().Object, Trigger: trigger, Attempt: 1}
	if t.op != nil {
		req.Operation = t.op.state.Prepared(gen)
	}
	if r.children {
		req.Children = r.types.Children(cl.owned(cr))
	}
	if len(r.related) > 0 {
		found, err := related.FromObjects(r.related, r.crds, cr.Object, slices.Concat(cl.objects(), r.extra))
		if err != nil {
			return nil, fmt.Errorf("RelatedObjectInvalid: %w", err)
		}
		if len(found.Missing) > 0 {
			return nil, fmt.Errorf("RelatedObjectMissing: required related objects missing (add them to the CR file), the reconciler was not called: %s", strings.Join(found.Missing, ", "))
		}
		req.Related = found.Related
	}
	res, err := r.rec.Reconcile(ctx, req)
	if miss, ok := errors.AsType[*exchange.NoRecordingError](err); ok {
		return nil, miss
	}
	o := remote.Decide(res, err)
	if !o.Success && o.Action != remote.Pending {
		t.endOperation(OperationFailed)
		return nil, fmt.Errorf("%s: %s", o.Reason, o.Message)
	}
	t.requeue = o.Action == remote.RequeueAfter
	children, errs := r.types.Build(res.Resources, cr, r.force)
	if f := planner.Verdict(errs); f != nil {
		t.endOperation(OperationFailed)
		return nil, fmt.Errorf("%s: %s", f.Reason, f.Message)
	}
	objs := make([]resources.Object, len(children))
	for i, c := range children {
		objs[i] = resources.Object{Obj: c.Obj}
	}
	changes := cl.reconcile(declarative.Plan{Apply: objs})
	var cs conditions
	switch {
	case o.Action == remote.Pending:
		r.wait.pending(t, *res.Operation, string(cr.GetUID()), gen, n)
		cs.pending = o.Message
	case t.op != nil:
		cs.ended = fmt.Sprintf("operation %q ended", t.op.state.ID)
		t.endOperation(OperationDone)
	}
	if cl.writeStatusOf(t.key, res.Status, cs) {
		changes = append(changes, Change{Update, cl.names.ref(cr) + "/status"})
	}
	return changes, nil
}

func objectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}
