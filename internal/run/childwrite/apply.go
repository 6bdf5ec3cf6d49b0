package childwrite

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run/kobj"
	"github.com/orkspace/ork/internal/target"
	"github.com/orkspace/ork/internal/trace"
)

// reasonApplyFailed is the reason of a failed child write.
const reasonApplyFailed = planner.ReasonApplyFailed

// writeAttempts bounds the re-read and retry of one child write whose precondition
// failed (someone changed or replaced the object between ork's read and its write).
const writeAttempts = 3

// Creator creates a child and answers with what ork needs of it: its metadata
// (metacreate.Creator; a fake dynamic client's in unit tests).
type Creator interface {
	Create(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured, opts metav1.CreateOptions) (metav1.Object, error)
}

// planned is an object ready to apply: resolved type, namespace and owner set.
type planned struct {
	obj    *unstructured.Unstructured
	gvr    schema.GroupVersionResource
	ref    Ref
	force  bool
	digest [32]byte
	// createOnly objects (onCreate) are created when missing and never written again.
	createOnly bool
	// decision is the id of the pass writing it, sent in naming.DecisionAnnotation ("": none).
	decision string
	// seen collects what the write saw, for the decision log; nil when it is off.
	seen *seen
	// after is where a write puts what it answered (wrote), for the pass's ChildStates.
	after *metav1.Object
}

// sent is p's object as a write sends it: with the pass's decision annotation. obj itself,
// what the digest and the drift test judge, never carries it, so a new id alone is never a
// reason to write, and a child whose write is skipped keeps the id of the pass that last
// wrote it.
func (p planned) sent() *unstructured.Unstructured {
	if p.decision == "" {
		return p.obj
	}
	obj := &unstructured.Unstructured{Object: maps.Clone(p.obj.Object)}
	md, _ := p.obj.Object["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	ann, _ := md["annotations"].(map[string]any)
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[naming.DecisionAnnotation] = p.decision
	md["annotations"] = ann
	obj.Object["metadata"] = md
	return obj
}

// Report counts what a pass's writes changed, for the Event, and says what each object's
// write did, for the decision trace.
type Report struct {
	Created, Changed, Pruned int
	Objects                  []trace.Apply
	// Children is each child's account for the decision log, in the order written; nil
	// unless Deps.Record.
	Children []decision.Child
	// kept are the children the result lists: what prune leaves alone.
	kept map[Ref]bool
	// conflicts are the conflicting field managers of the object at each index that failed
	// on a server-side apply conflict.
	conflicts map[int][]string
	// written are the children the pass created or applied, as their writes answered, and
	// pruned those it deleted: how the pass left them (ChildStates).
	written map[Ref]metav1.Object
	pruned  map[Ref]bool
}

// Error is a failed write with the reason the pass's condition and Event carry; Managers
// are the field managers of a server-side apply conflict (prepared.lastApply).
type Error struct {
	Reason   string
	msg      string
	Managers []string
	// err is the request's error, when one failed: a target's writes tell an unreachable
	// cluster from a refused object by it (target.Unreachable).
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// withCause is e with err as the request's error it unwraps to.
func (e *Error) withCause(err error) *Error {
	e.err = err
	return e
}

func failed(reason, format string, a ...any) *Error {
	return &Error{Reason: reason, msg: fmt.Sprintf(format, a...)}
}

// ApplyAll checks every object first and applies none if one is wrong (all or nothing):
// an undeclared type, an invalid object, or a child another owner controls. Then it writes
// them one by one, each with the id of the pass's decision ("": none).
func (w *Writer) ApplyAll(ctx context.Context, cr *unstructured.Unstructured, apply, createIfMissing []resources.Object, id string) (Report, error) {
	plans, err := w.planAll(cr, apply, createIfMissing)
	if err != nil {
		return Report{}, err
	}
	for i := range plans {
		plans[i].decision = id
		plans[i].after = new(metav1.Object)
		if w.Record {
			plans[i].seen = &seen{}
		}
	}
	rep := Report{kept: make(map[Ref]bool, len(plans))}
	for _, p := range plans {
		rep.Objects = append(rep.Objects, trace.Apply{Ref: p.gvr.Resource + "/" + p.obj.GetName(),
			Namespace: p.obj.GetNamespace(), Outcome: trace.Skipped})
		rep.kept[p.ref] = true
		w.fx.listed(p.ref)
	}
	// A child the cache shows controlled by this CR takes no lock: its uid precondition
	// decides. Any other is locked from its live read to its first write, so that no other
	// CR takes it in between (two CRs finding it absent cannot both create it).
	lives := make([]metav1.Object, len(plans))
	var unowned []Ref
	for i, p := range plans {
		if lives[i] = w.ownCached(cr, p); lives[i] == nil {
			unowned = append(unowned, p.ref)
		}
	}
	held, err := w.lockChildren(ctx, unowned)
	if err != nil {
		return rep, err
	}
	defer held.releaseAll()
	for i, p := range plans {
		if lives[i] != nil {
			continue
		}
		if lives[i], err = w.checkOwner(ctx, cr, p); err != nil {
			rep.Objects[i].Outcome, rep.Objects[i].Error = trace.Failed, err.Error()
			return rep, err
		}
	}
	for i, p := range plans {
		created, changed, err := w.writeChild(ctx, cr, p, lives[i])
		held.release(p.ref)
		if out := *p.after; out != nil {
			if rep.written == nil {
				rep.written = map[Ref]metav1.Object{}
			}
			rep.written[p.ref] = out
		}
		if w.Record {
			rep.Children = append(rep.Children, p.recorded(created, changed, lives[i], err))
		}
		o := &rep.Objects[i]
		switch {
		case err != nil:
			o.Outcome, o.Error = trace.Failed, err.Error()
			if pe, ok := errors.AsType[*Error](err); ok && len(pe.Managers) > 0 {
				rep.conflicts = map[int][]string{i: pe.Managers}
			}
			return rep, err
		case created:
			rep.Created++
			o.Outcome = trace.Created
		case changed:
			rep.Changed++
			o.Outcome = trace.Updated
		default:
			o.Outcome = trace.Unchanged
		}
	}
	return rep, nil
}

// planAll plans every object of apply and createIfMissing for cr with the planner simulate
// and remote check share: all or nothing.
func (w *Writer) planAll(cr *unstructured.Unstructured, apply, createIfMissing []resources.Object) ([]planned, error) {
	children, errs := w.planner().Plan(cr, apply, createIfMissing)
	if f := planner.Verdict(errs); f != nil {
		return nil, refused(f)
	}
	plans := make([]planned, len(children))
	for i, ch := range children {
		plans[i] = planned{obj: ch.Obj, gvr: ch.Resource, ref: RefOf(ch.Resource.GroupResource(), ch.Obj), force: ch.Force,
			digest: ch.Digest, createOnly: ch.CreateOnly}
	}
	return plans, nil
}

// planner resolves kinds by the cluster's discovery and checks them against the types the
// controller watches.
func (w *Writer) planner() planner.Planner {
	return planner.Planner{
		Map: func(gvk schema.GroupVersionKind) (planner.Mapping, error) {
			m, err := w.Mapping(gvk)
			if err != nil {
				return planner.Mapping{}, err
			}
			return planner.Mapping{Resource: m.Resource, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, nil
		},
		Declared:      func(gr schema.GroupResource) bool { return w.Managed[gr] },
		Operator:      w.Operator,
		Watched:       w.Watched,
		ForceConflict: w.ForceConflict,
		ShardSlots:    w.ShardSlots,
		Remote:        w.Remote,
	}
}

// refused is the planner's refusal as a failed pass.
func refused(f *planner.Failure) *Error { return failed(f.Reason, "%s", f.Message) }

// ownCached is the cached child when the cache alone decides its ownership: one the cache
// shows as this CR's is taken as it is (the write's uid precondition catches a
// replacement), as is an onCreate child that exists (never written again). nil otherwise.
func (w *Writer) ownCached(cr *unstructured.Unstructured, p planned) metav1.Object {
	cached := w.cachedChild(p)
	if last, ok := w.Book.get(p.ref); ok && last.owner != cr.GetUID() && (cached == nil || cached.GetResourceVersion() != last.rv) {
		return nil // another CR wrote it after the cache's version: read it
	}
	if cached != nil && (p.createOnly || w.controls(cr, cached)) {
		return cached
	}
	return nil
}

// checkOwner refuses a child another object controls, before anything of the result is
// written. A child neither the cache nor ork's writes know of is taken as absent (nil) with
// no read: it is created conditionally, and only on AlreadyExists read and judged
// (writeChild, createOnce), so a new child costs one request and two CRs (or two orks)
// creating it at once cannot both win. Any other child ownCached does not vouch for
// (another controller, an orphan, an earlier incarnation's, or written by another CR since
// the cache last heard of it) is decided against the live object, which it returns (nil:
// absent). applyAll holds the child's lock meanwhile.
func (w *Writer) checkOwner(ctx context.Context, cr *unstructured.Unstructured, p planned) (metav1.Object, error) {
	if _, wrote := w.Book.get(p.ref); w.cachedChild(p) == nil && !wrote && !w.fx.readsUnknown() {
		return nil, nil
	}
	live, err := w.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed)
	if err != nil {
		return nil, err
	}
	if f := w.judge(cr, live, p.gvr.Resource); f != nil {
		return nil, refused(f)
	}
	return live, nil
}

// writeChild writes one child onto live, the object checkOwner decided on (nil: absent),
// under its lock if checkOwner read it, as the run's mode writes it (effects.writeChild).
func (w *Writer) writeChild(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (created, changed bool, err error) {
	if p.createOnly {
		return w.createOnce(ctx, cr, p, live)
	}
	return w.fx.writeChild(ctx, cr, p, live)
}

// mayApply refuses a write of p onto live that the fence, the owner or live's deletion
// forbids.
func (w *Writer) mayApply(cr *unstructured.Unstructured, p planned, live metav1.Object) error {
	if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
		return err
	}
	if f := w.judge(cr, live, p.gvr.Resource); f != nil {
		return refused(f)
	}
	if live != nil && live.GetDeletionTimestamp() != nil {
		// Applied onto an object being deleted, the write would "succeed" and the child
		// then vanish: wait until it is gone, and create it anew.
		return failed(reasonApplyFailed, "%s/%s is being deleted: it is created again once it is gone",
			p.gvr.Resource, p.obj.GetName())
	}
	return nil
}

// applyChild is writeChild in a real run. A child ork controls is applied with a uid
// precondition (never onto a replacement someone else created); an orphan or an earlier
// incarnation's child is adopted with a resourceVersion precondition too; an absent one is
// created, and read and judged when the create finds one after all. When a precondition
// fails, the object is read again and the decision taken anew.
func (w *Writer) applyChild(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (created, changed bool, err error) {
	for range writeAttempts {
		if err := w.mayApply(cr, p, live); err != nil {
			return false, false, err
		}
		owned := live != nil && w.controls(cr, live)
		if live == nil {
			out, err := w.create(ctx, p)
			if err == nil {
				w.Book.Wrote(p.ref, p.digest, cr.GetUID(), nil, out)
				p.wrote(out)
				return true, false, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return false, false, w.applyError(p, err)
			}
			// Someone has it (the cache had not heard of it, or it is not ork's and so not
			// in the cache): read it, and decide on it at the loop's top.
			if live, err = w.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed); err != nil {
				return false, false, err
			}
			continue
		}
		// Unchanged since ork's own last write, as its write book knows (the same process)
		// or as the object says (the digest it carries, and every field of it still ork's).
		if owned && (w.Book.unchanged(p.ref, p.digest, live.GetResourceVersion()) || w.appliedUnchanged(ctx, p, live)) {
			return false, false, nil
		}
		p.decision = keptDecision(p, live, owned)
		target, err := w.handOver(ctx, cr, p, live)
		var out metav1.Object
		if err == nil {
			w.readFull(ctx, p, target)
			out, err = w.apply(ctx, p, target, owned)
		}
		if err == nil {
			last, _ := w.Book.get(p.ref)
			w.Book.Wrote(p.ref, p.digest, cr.GetUID(), live, out)
			p.wrote(out)
			if live == nil {
				return true, false, nil
			}
			return false, applyChanged(live, out, last.rv), nil
		}
		if !precondition.Failed(err) || fieldConflict(err) {
			return false, false, w.applyError(p, err)
		}
		if live, err = w.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed); err != nil {
			return false, false, err
		}
	}
	return false, false, failed(reasonApplyFailed, "apply %s/%s: the object kept changing under %d writes", p.gvr.Resource, p.obj.GetName(), writeAttempts)
}

// keptDecision is the decision id an apply of p onto live sends. An owned child that carries
// p's very digest already holds this intent: the apply repairs drift, or is sent because
// ork could not prove its fields still its own. The decision that wrote the intent stays on
// it; a new id would make each such apply a change, and a child whose fields ork cannot
// prove its own would be written on every pass.
func keptDecision(p planned, live metav1.Object, owned bool) string {
	if !owned || p.decision == "" || live.GetAnnotations()[naming.AppliedAnnotation] != hex.EncodeToString(p.digest[:]) {
		return p.decision
	}
	if id, ok := live.GetAnnotations()[naming.DecisionAnnotation]; ok {
		return id
	}
	return p.decision
}

// createOnce creates an onCreate child that is missing, and never writes it again: a create,
// not an apply, because the cache that said "missing" may lag behind an earlier pass's create
// and an apply would overwrite a user's later edit.
func (w *Writer) createOnce(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (created, changed bool, err error) {
	if live == nil {
		if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
			return false, false, err
		}
		out, err := w.createObject(ctx, p, metav1.CreateOptions{FieldManager: naming.FieldManager, DryRun: w.fx.options()})
		w.countApply(p, err == nil || apierrors.IsAlreadyExists(err))
		switch {
		case err == nil:
			w.fx.created(cr, p, out)
			p.wrote(out)
			return true, false, nil
		case !apierrors.IsAlreadyExists(err):
			return false, false, w.applyError(p, err)
		}
		if live, err = w.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed); err != nil || live == nil {
			return false, false, err
		}
	}
	// It exists: never written again, but never another owner's either.
	if f := w.judge(cr, live, p.gvr.Resource); f != nil {
		return false, false, refused(f)
	}
	return false, false, w.labelOperator(ctx, cr, p, live)
}

// labelOperator adds the operator label to an onCreate child an older ork created without
// it, which the child cache (selecting on the label) would otherwise never show: its
// changes and deletion would go unheard. Only the label is written (a merge patch with the
// object's uid as precondition); the object is otherwise never written again.
func (w *Writer) labelOperator(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) error {
	if live.GetLabels()[naming.OperatorLabel] == w.Operator || !w.fx.relabels() {
		return nil
	}
	if live.GetLabels()[naming.ManagedByLabel] != naming.ManagedBy {
		// Not written by ork (a user's object of the same name, adopted as onCreate
		// children are): the label would not bring it into the cache, which selects on
		// managed-by too, so writing it changes nothing ork can use.
		return nil
	}
	if err := w.MayWrite(kobj.KeyOf(cr), cr.GetUID()); err != nil {
		return err
	}
	patch, err := OperatorLabelPatch(live.GetUID(), "", w.Operator)
	if err != nil {
		return err
	}
	out, err := w.Meta.Resource(p.gvr).Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: naming.FieldManager})
	if apierrors.IsNotFound(err) || precondition.Failed(err) {
		// Gone or replaced between the read and the patch. The cache never held the old
		// object, so no event will bring this CR back: fail the pass, and its retry
		// decides anew (creates the missing child, or labels the new one).
		return failed(reasonApplyFailed, "%s/%s was deleted or replaced while ork labelled it: decided again on the retry",
			p.gvr.Resource, p.obj.GetName())
	}
	if err != nil {
		return w.applyError(p, err)
	}
	// Recorded as ork's own write, so that the add its label causes in the cache is known
	// for an echo, not a change to pass the owner for.
	w.Book.Wrote(p.ref, p.digest, cr.GetUID(), live, out)
	return nil
}

// apply server-side applies p onto live: with live's uid as precondition when it exists, and
// its resourceVersion too when adopting it (an absent child is created, not applied). The
// apiserver answers with the object's metadata only: ork needs no more of it, and decoding
// whole objects was the largest part of ork's CPU under load.
func (w *Writer) apply(ctx context.Context, p planned, live metav1.Object, owned bool) (metav1.Object, error) {
	obj := p.sent()
	if live != nil {
		obj = &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
		md := maps.Clone(obj.Object["metadata"].(map[string]any))
		obj.Object["metadata"] = md
		md["uid"] = string(live.GetUID())
		// Adopting, the version decided on must be the one written to. With the children
		// payload on, always: then a write that changed nothing is known for one, and the
		// version it returns is not taken for ork's own (it may be another writer's status
		// update the reconciler must hear of).
		if !owned || w.ChildrenPayload {
			md["resourceVersion"] = live.GetResourceVersion()
		}
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", p.gvr.Resource, p.obj.GetName(), err)
	}
	opts := metav1.PatchOptions{FieldManager: naming.FieldManager, Force: &p.force}
	var out metav1.Object
	if p.seen != nil {
		// The decision log's changed fields need the whole object the apply made.
		out, err = w.client(p).Patch(ctx, p.obj.GetName(), types.ApplyPatchType, body, opts)
	} else {
		out, err = w.Meta.Resource(p.gvr).Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.ApplyPatchType, body, opts)
	}
	w.countApply(p, err == nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createObject creates p as a write sends it, answered with its metadata (Creator), or with
// the whole object when the decision log needs its fields.
func (w *Writer) createObject(ctx context.Context, p planned, opts metav1.CreateOptions) (metav1.Object, error) {
	if p.seen != nil {
		return w.client(p).Create(ctx, p.sent(), opts)
	}
	return w.Creator.Create(ctx, p.gvr, p.obj.GetNamespace(), p.sent(), opts)
}

// create creates p, which ork believes absent: the create fails with AlreadyExists when any
// object of that name exists, so it never writes over one that was not judged. Its fields
// are the field manager's Update entry; the next apply takes them over (handOver).
func (w *Writer) create(ctx context.Context, p planned) (metav1.Object, error) {
	out, err := w.createObject(ctx, p, metav1.CreateOptions{FieldManager: naming.FieldManager})
	w.countApply(p, err == nil || apierrors.IsAlreadyExists(err))
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (w *Writer) client(p planned) dynamic.ResourceInterface {
	return w.Dyn.Resource(p.gvr).Namespace(p.obj.GetNamespace())
}

func (w *Writer) countApply(p planned, ok bool) {
	result := "success"
	if !ok {
		result = "error"
	}
	w.ApplyTotal.WithLabelValues(w.CRD, p.obj.GetKind(), result).Inc()
}

// cachedChild is the child from its informer's cache (its metadata at least), or nil.
func (w *Writer) cachedChild(p planned) metav1.Object {
	for _, ch := range w.Children {
		if ch.GVR.GroupResource() != p.ref.gr {
			continue
		}
		key := p.ref.name
		if p.ref.namespace != "" {
			key = p.ref.namespace + "/" + p.ref.name
		}
		obj, exists, err := ch.Store.GetByKey(key)
		if err != nil || !exists {
			return nil
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil
		}
		return m
	}
	return nil
}

// applyError says what a failed write was: a field another manager owns (forceConflict
// false), an object that changed or was replaced meanwhile, or the apiserver's own error.
func (w *Writer) applyError(p planned, err error) error {
	if errors.Is(err, w.NotLeader) {
		return w.NotLeader // not a failed apply: this replica stops
	}
	what := fmt.Sprintf("%s/%s", p.gvr.Resource, p.obj.GetName())
	var status apierrors.APIStatus
	switch {
	case w.Remote && namespaceMissing(err):
		// ork creates no namespaces on a target: the CR waits until someone does.
		return failed(target.ReasonTargetNamespaceMissing, "apply %s: namespace %s does not exist on the target: ork creates no namespaces there",
			what, p.obj.GetNamespace()).withCause(err)
	case fieldConflict(err) && errors.As(err, &status):
		pe := failed(reasonApplyFailed, "apply %s: conflict with another field manager (forceConflict is false): %s", what, status.Status().Message)
		pe.Managers = conflictingManagers(err)
		return pe
	case precondition.UIDMismatch(err):
		return failed(reasonApplyFailed, "apply %s: the object was deleted and created again while ork wrote it: %v", what, err)
	case apierrors.IsConflict(err):
		return failed(reasonApplyFailed, "apply %s: the object changed while ork wrote it (resourceVersion precondition): %v", what, err)
	}
	return failed(reasonApplyFailed, "apply %s: %v", what, err).withCause(err)
}

// namespaceMissing reports a write refused because its namespace does not exist.
func namespaceMissing(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	return status.Status().Details.Kind == "namespaces"
}

// fieldConflict reports a server-side apply conflict: fields another manager owns.
func fieldConflict(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

// applyChanged reports whether an apply onto live that returned out changed the object.
// live may come from a cache that lags behind ork's own last write, which returned
// lastWritten: an answer of that very version is a no-op, not a change.
func applyChanged(live, out metav1.Object, lastWritten string) bool {
	rv := out.GetResourceVersion()
	return rv != live.GetResourceVersion() && rv != lastWritten
}
