package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/declarative"
	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run/candidate"
	"github.com/orkspace/ork/internal/run/childwrite"
)

// managedType is a resource type a reconciler may create, with its children-payload key.
type managedType struct {
	schema.GroupVersionResource
	// typeKey names the type in prepared.children: the intent type ("deployment") for
	// built-ins, "<plural>.<group>" otherwise.
	typeKey string
}

// newReconciler picks the CRD's reconciler and the resource types it may manage.
func newReconciler(e *Engine, crd *katalog.CRD) (reconciler, []managedType, error) {
	if r := crd.OperatorBox.Reconcile.Remote; r != nil {
		rr, err := remote.New(crd, remote.Options{
			Secrets:          e.secrets,
			DefaultNamespace: e.opts.Namespace,
			Observe: func(code string, d time.Duration) {
				e.opts.Metrics.RemoteDuration.WithLabelValues(crd.Name, code).Observe(d.Seconds())
			},
			Record: e.opts.Record,
			Pauses: e.pauses,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("remote reconciler: %w", err)
		}
		var managed []managedType
		for _, m := range r.ManagedResources {
			managed = append(managed, managedType{
				GroupVersionResource: schema.GroupVersionResource{Group: m.Group, Version: m.Version, Resource: m.Plural},
				typeKey:              planner.Key(schema.GroupResource{Group: m.Group, Resource: m.Plural}),
			})
		}
		out := &remoteReconciler{r: rr, children: r.Payload.Children.Enabled, prune: r.Prune, lastApply: r.Payload.LastApply}
		if r.Candidate != nil {
			if out.cand, err = candidate.New(crd, candidate.Deps{Secrets: e.secrets, Namespace: e.opts.Namespace,
				Metrics: e.opts.Metrics.Candidate, Trace: e.trace, Log: e.log}); err != nil {
				rr.Close()
				return nil, nil, err
			}
		}
		return out, managed, nil
	}
	types, err := declaredTypes(e, crd)
	if err != nil {
		return nil, nil, fmt.Errorf("declarative reconciler: %w", err)
	}
	return declarativeReconciler{r: declarative.New(crd)}, types, nil
}

// declaredTypes are the types of a declarative CRD's blocks. A customs entry's type comes
// from its apiVersion and kind, which must be literal: a templated kind cannot be watched
// (or granted by rbac gen) ahead of time.
func declaredTypes(e *Engine, crd *katalog.CRD) ([]managedType, error) {
	seen := map[schema.GroupVersionResource]bool{}
	var out []managedType
	add := func(gvr schema.GroupVersionResource, typeKey string) {
		if !seen[gvr] {
			seen[gvr] = true
			out = append(out, managedType{GroupVersionResource: gvr, typeKey: typeKey})
		}
	}
	ob := crd.OperatorBox
	for _, block := range []katalog.DeclaredResources{ob.OnCreate, ob.OnReconcile, ob.OnDelete} {
		for _, key := range slices.Sorted(maps.Keys(block)) {
			t, ok := resources.LookupBlock(key)
			if !ok {
				continue
			}
			if t.Type != resources.Custom {
				add(t.GVR(), t.Type)
				continue
			}
			for i, entry := range block[key] {
				apiVersion, _ := entry["apiVersion"].(string)
				kind, _ := entry["kind"].(string)
				if render.IsTemplate(apiVersion) || render.IsTemplate(kind) {
					return nil, fmt.Errorf("%s[%d]: apiVersion and kind of a customs entry must be literal, not templates", key, i)
				}
				gv, err := schema.ParseGroupVersion(apiVersion)
				if err != nil {
					return nil, fmt.Errorf("%s[%d]: apiVersion %q: %w", key, i, apiVersion, err)
				}
				m, err := e.api.Mapping(gv.WithKind(kind))
				if err != nil {
					return nil, fmt.Errorf("%s[%d]: %s %s is not served by the cluster: %w", key, i, apiVersion, kind, err)
				}
				add(m.Resource, planner.Key(m.Resource.GroupResource()))
			}
		}
	}
	return out, nil
}

// remoteReconciler asks the CRD's endpoint.
type remoteReconciler struct {
	r        *remote.Reconciler
	children bool
	// prune is reconcile.remote.prune; lastApply is payload.lastApply.
	prune, lastApply bool
	// cand is reconcile.remote.candidate; nil without one.
	cand *candidate.Candidate
}

func (rr *remoteReconciler) close() {
	if rr.cand != nil {
		rr.cand.Close()
	}
	rr.r.Close()
}

func (declarativeReconciler) close() {}

// wireTrigger is the prepared.trigger sent for t. docs/remote-reconciler.md#when-ork-calls fixes five values; a child's
// change is sent as resync (the CR did not change, converge again), and only ork's own log
// says "child".
func wireTrigger(t Trigger) remote.Trigger {
	if t == TriggerChild || t == TriggerRelated {
		return remote.TriggerResync
	}
	return remote.Trigger(t)
}

func (rr *remoteReconciler) reconcile(ctx context.Context, env passEnv, in input) (d decision) {
	obj := in.cr.Object
	if in.deleting && in.cr.GetDeletionTimestamp() == nil {
		obj = withDeletionTimestamp(obj)
	}
	req := remote.Request{Key: in.key, Object: obj, Trigger: wireTrigger(in.trigger), Attempt: in.attempt, DryRun: env.dryRun, Target: in.target.Name}
	if rr.children {
		req.Children = env.children(in.cr)
	}
	if rr.lastApply {
		req.LastApply = env.lastApply(in.key, in.cr.GetUID())
	}
	var relObjs map[string][]map[string]any
	if env.related != nil {
		rel, hold := env.related.Read(ctx, in.key, in.cr, in.gone, in.deleting)
		if hold != nil {
			held := heldByRelated(hold)
			held.related = rel.Names
			return held
		}
		req.Related, relObjs = rel.Objects, rel.Objects
		defer func() {
			d.related, d.relatedCut, d.relatedRead = rel.Names, rel.Cut, true
			if d.rec.called {
				d.rec.related = relatedOf(rel.Objects)
			}
		}()
	} else {
		// No entries (any more): nothing is cut, and a condition left from when there
		// were goes.
		defer func() { d.relatedRead = true }()
	}
	held, heldAt, unreadable, err := readOperation(ctx, env, in)
	if err != nil {
		return failureFrom(err) // not read: neither held nor not held, so no call
	}
	now := time.Now()
	if held.Expired(now) && !in.deleting {
		// A delete is never timed out: its tombstone keeps no mark, and its call must come.
		return timedOut(held, heldAt, now)
	}
	if env.unchanged != nil && !in.deleting && held == nil && !unreadable && rr.cand == nil {
		// After the related read: their resourceVersions are inputs, and the read records the
		// references whose next change passes this CR again, skipped or not.
		args, _ := rr.r.RenderArgs(in.cr.Object)
		if skip, ok := env.unchanged(in, args, relatedOf(relObjs)); ok {
			return skip
		}
	}
	req.Operation = held.Prepared(in.cr.GetGeneration())
	if env.callback != nil && !in.deleting {
		if held.Held() {
			req.Operation.Callback = env.callback(ctx, in.cr.GetUID(), held.Generation, held.ID)
		} else if held == nil {
			req.Callback = env.callback(ctx, in.cr.GetUID(), in.cr.GetGeneration(), "")
		}
	}
	// Checked again right before the POST: the token read may have outlasted the Lease.
	req.Hold = func() error { return env.mayWrite(in.key, in.cr.GetUID()) }
	call, side := rr.r.Call, rollout.Stable
	if rr.cand != nil {
		var badPin bool
		if side, badPin = rr.cand.SideOf(in.cr); badPin {
			env.event(in.cr, corev1.EventTypeWarning, ReasonInvalidReconcilerPin, fmt.Sprintf("annotation %s: %q names no side (stable or candidate): ignored, the canary slice decides",
				rollout.PinAnnotation, in.cr.GetAnnotations()[rollout.PinAnnotation]))
		}
	}
	if side == rollout.Candidate {
		// The canary slice: the candidate's answer is applied, stable is not asked.
		call = rr.cand.Call
		defer func() { d.candidate = true }()
	}
	res, x, err := call(ctx, req)
	if errors.Is(err, errNotLeader) {
		return decision{notLeader: true}
	}
	if side == rollout.Stable {
		rr.shadow(env, in, req, x, res, err)
	}
	if !x.Time.IsZero() {
		// Deferred after the related objects' note above, so run before it: that one adds
		// what was read to the record this one makes.
		defer func() { d.rec = rr.answeredBy(in, x, side) }()
	}
	out := remote.Decide(res, err)
	d = decision{success: out.Success, after: out.After, reason: out.Reason, message: out.Message, remoteTime: x.Duration, quiet: out.Quiet}
	if env.traced && !x.Time.IsZero() {
		d.request, _ = exchange.Digest(x.Request, env.redact)
	}
	if res != nil {
		d.result = cmp.Or(res.Result, remote.ResultOK)
	}
	switch out.Action {
	case remote.Done:
		d.action = actionDone
	case remote.RequeueAfter:
		d.action = actionRequeueAfter
	case remote.RetryAfter:
		d.action = actionRetryAfter
	case remote.Pending:
		d.success, d.action = true, actionRequeueAfter
	default:
		d.action = actionBackoff
	}
	d.op = &opStep{held: held, heldAt: heldAt} // held as it was, unless the answer moves it
	switch {
	case out.Action == remote.Pending && in.deleting:
		// Polled until the delete's answer is final (its finalizeTimeout bounds it); a CR
		// on its way out keeps no operation.
		d.after = out.After
		return d
	case out.Action == remote.Pending:
		pending(&d, held, heldAt, res, in, now)
	case out.Success && held != nil && !in.deleting:
		finished(&d, env, held, heldAt, in)
	case out.Success && unreadable && !in.deleting:
		d.op.clear = true // a final answer: what could not be read goes
	}
	if !d.success || in.deleting {
		return d
	}
	d.status = res.Status
	// Absent resources are "no opinion": only a list, even an empty one, is exhaustive.
	d.prune = rr.prune && res.Resources != nil
	var entries []remote.AppliedResource
	if rr.lastApply {
		entries = make([]remote.AppliedResource, len(res.Resources))
		for i, raw := range res.Resources {
			entries[i] = childwrite.EntryOf(raw)
		}
		d.entries = entries
	}
	built, errs := planner.Build(res.Resources, in.cr.GetNamespace(), in.cr.GetName())
	if v := planner.Verdict(errs); v != nil {
		f := failure(v.Reason, "%s", v.Message)
		f.entries = entries
		f.op, f.progress = d.op, d.progress // the reconciler's operation is real all the same
		return f
	}
	if len(built) > 0 {
		d.apply = built
	}
	return d
}

// answeredBy is what a pass whose request was sent records of its reconciler: the version
// it named, the rollout side (during a rollout only) and the args it was sent. Related
// objects are added by the caller, which read them.
func (rr *remoteReconciler) answeredBy(in input, x exchange.Exchange, side rollout.Side) passRecord {
	rec := passRecord{called: true, version: remote.ReconcilerVersion(x)}
	if rr.cand != nil {
		rec.side = string(side)
	}
	// Rendered again rather than kept from the request: the same templates on the same
	// object, and only the digest needs them.
	rec.args, _ = rr.r.RenderArgs(in.cr.Object)
	return rec
}

// shadow hands a stable pass's request to the candidate (shadow mode, or the stable slice of
// a canary with shadowRest), once the stable call was sent: the same request, related
// objects included, as a dry run. A dry run of ork itself shadows nothing (it passes each CR
// once and stops), nor does a delete unless candidate.shadowDeletes: a reconciler may clean
// up outside the cluster whatever dryRun says.
func (rr *remoteReconciler) shadow(env passEnv, in input, req remote.Request, x exchange.Exchange, res *remote.Result, err error) {
	if rr.cand == nil || env.dryRun || x.Time.IsZero() || !rr.cand.Shadows() {
		return
	}
	if in.deleting && !rr.cand.ShadowsDeletes() {
		return
	}
	if err != nil {
		res = nil // an "error" result: nothing to compare with
	}
	rr.cand.Shadow(req, in.cr.GetNamespace(), in.cr.GetName(), res)
}

// withDeletionTimestamp marks a deleted object's last state as deleting, on a shallow copy.
func withDeletionTimestamp(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	md := map[string]any{}
	if m, ok := obj["metadata"].(map[string]any); ok {
		for k, v := range m {
			md[k] = v
		}
	}
	md["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	out["metadata"] = md
	return out
}

// declarativeReconciler renders the CRD's onCreate/onReconcile/onDelete blocks.
type declarativeReconciler struct{ r *declarative.Reconciler }

func (dr declarativeReconciler) reconcile(ctx context.Context, _ passEnv, in input) decision {
	plan, err := dr.r.Desired(in.cr.Object, resources.Options{})
	if err != nil {
		return failure(reasonRenderFailed, "%v", err)
	}
	if in.deleting {
		return decision{success: true, action: actionDone, reason: ReasonSucceeded, remove: plan.Delete, rec: passRecord{called: true}}
	}
	return decision{success: true, action: actionDone, reason: ReasonSucceeded,
		apply: plan.Apply, createIfMissing: plan.CreateIfMissing, rec: passRecord{called: true}}
}
