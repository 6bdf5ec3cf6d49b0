package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/runplan"
	"github.com/orkspace/ork/internal/trace"
)

// Labels ork puts on every object it applies; OperatorLabel's value is Options.Name.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "orkestra"
	OperatorLabel  = resources.OperatorLabel
)

// childWriteAttempts bounds the re-read and retry of one child write whose precondition
// failed (someone changed or replaced the object between ork's read and its write).
const childWriteAttempts = 3

// planned is an object ready to apply: resolved type, namespace and owner set.
type planned struct {
	obj    *unstructured.Unstructured
	gvr    schema.GroupVersionResource
	ref    childRef
	force  bool
	digest [32]byte
	// createOnly objects (onCreate) are created when missing and never written again.
	createOnly bool
}

// applyReport counts what a pass's writes changed, for the Event, and says what each
// object's write did, for the decision trace.
type applyReport struct {
	created, changed, pruned int
	objects                  []trace.Apply
	// kept are the children the result lists: what prune leaves alone.
	kept map[childRef]bool
	// conflicts are the conflicting field managers of the object at each index that failed
	// on a server-side apply conflict.
	conflicts map[int][]string
}

// passError is a failed pass with the reason its condition and Event carry; managers are
// the field managers of a server-side apply conflict (prepared.lastApply).
type passError struct {
	reason, msg string
	managers    []string
}

func (e *passError) Error() string { return e.msg }

func failed(reason, format string, a ...any) *passError {
	return &passError{reason: reason, msg: fmt.Sprintf(format, a...)}
}

// applyAll checks every object first and applies none if one is wrong (all or nothing):
// an undeclared type, an invalid object, or a child another owner controls. Then it writes
// them one by one.
func (c *controller) applyAll(ctx context.Context, cr *unstructured.Unstructured, d decision) (applyReport, error) {
	plans, err := c.planAll(cr, d)
	if err != nil {
		return applyReport{}, err
	}
	rep := applyReport{kept: make(map[childRef]bool, len(plans))}
	for _, p := range plans {
		rep.objects = append(rep.objects, trace.Apply{Ref: p.gvr.Resource + "/" + p.obj.GetName(),
			Namespace: p.obj.GetNamespace(), Outcome: trace.Skipped})
		rep.kept[p.ref] = true
		if c.e.dry == nil {
			c.e.writes.relisted(p.ref)
		}
	}
	// A child the cache shows controlled by this CR takes no lock: its uid precondition
	// decides. Any other is locked from its live read to its first write, so that no other
	// CR takes it in between (two CRs finding it absent cannot both create it).
	lives := make([]metav1.Object, len(plans))
	var unowned []childRef
	for i, p := range plans {
		if lives[i] = c.ownCached(cr, p); lives[i] == nil {
			unowned = append(unowned, p.ref)
		}
	}
	held, err := c.lockChildren(ctx, unowned)
	if err != nil {
		return rep, err
	}
	defer held.releaseAll()
	for i, p := range plans {
		if lives[i] != nil {
			continue
		}
		if lives[i], err = c.checkOwner(ctx, cr, p); err != nil {
			rep.objects[i].Outcome, rep.objects[i].Error = trace.Failed, err.Error()
			return rep, err
		}
	}
	for i, p := range plans {
		created, changed, err := c.writeChild(ctx, cr, p, lives[i])
		held.release(p.ref)
		o := &rep.objects[i]
		switch {
		case err != nil:
			o.Outcome, o.Error = trace.Failed, err.Error()
			if pe, ok := errors.AsType[*passError](err); ok && len(pe.managers) > 0 {
				rep.conflicts = map[int][]string{i: pe.managers}
			}
			return rep, err
		case created:
			rep.created++
			o.Outcome = trace.Created
		case changed:
			rep.changed++
			o.Outcome = trace.Updated
		default:
			o.Outcome = trace.Unchanged
		}
	}
	return rep, nil
}

func (c *controller) planAll(cr *unstructured.Unstructured, d decision) ([]planned, error) {
	var plans []planned
	var errs []string
	for i, o := range d.apply {
		p, err := c.plan(cr, o)
		if err != nil {
			errs = append(errs, fmt.Sprintf("resources[%d]: %v", i, err))
			continue
		}
		plans = append(plans, p)
	}
	for i, o := range d.createIfMissing {
		p, err := c.plan(cr, o)
		if err != nil {
			errs = append(errs, fmt.Sprintf("onCreate[%d]: %v", i, err))
			continue
		}
		p.createOnly = true
		plans = append(plans, p)
	}
	if len(errs) > 0 {
		return nil, failed(reasonInvalidResource, "nothing applied: %s", strings.Join(errs, "; "))
	}
	return plans, nil
}

// plan resolves an object's resource type, checks it is declared, and sets namespace,
// owner references, the managed-by label and the operator label on a copy.
func (c *controller) plan(cr *unstructured.Unstructured, o resources.Object) (planned, error) {
	obj := o.Obj.DeepCopy()
	gvk := obj.GroupVersionKind()
	m, err := c.e.mapping(gvk)
	if err != nil {
		return planned{}, fmt.Errorf("%s %q: kind not served by the cluster: %w", gvk.Kind, obj.GetName(), err)
	}
	gr := m.Resource.GroupResource()
	if !c.managed[gr] {
		return planned{}, fmt.Errorf("%s %q: type %s is not declared in managedResources (declare it: {group: %q, plural: %s})",
			gvk.Kind, obj.GetName(), gr.String(), gr.Group, gr.Resource)
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespaced && obj.GetNamespace() == "":
		obj.SetNamespace(cr.GetNamespace())
	case !namespaced:
		obj.SetNamespace("")
	}
	if namespaced && obj.GetNamespace() == "" {
		return planned{}, fmt.Errorf("%s %q: namespaced, but the cluster-scoped owner gives no namespace (set one)", gvk.Kind, obj.GetName())
	}
	// Under --watch-namespace ork neither caches nor may write outside the watched set.
	if namespaced && !c.e.watches(obj.GetNamespace()) {
		return planned{}, fmt.Errorf("%s %q: namespace %s is not watched (--watch-namespace %s): ork can neither see nor write a child there",
			gvk.Kind, obj.GetName(), obj.GetNamespace(), strings.Join(c.e.opts.WatchNamespaces, ","))
	}
	// An ownerReference cannot cross namespaces, nor point from cluster scope into one; a
	// cluster-scoped CR may own children in any namespace (SPEC §3).
	ownable := cr.GetNamespace() == "" || obj.GetNamespace() == cr.GetNamespace()
	refs, err := ownerReferences(cr, obj.GetOwnerReferences(), ownable)
	if err != nil {
		return planned{}, fmt.Errorf("%s %q: %w", gvk.Kind, obj.GetName(), err)
	}
	obj.SetOwnerReferences(refs)
	markOwner(obj, cr, ownable)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = ManagedByValue
	labels[OperatorLabel] = c.e.opts.Name
	obj.SetLabels(labels)
	digest := resources.MarkApplied(obj)
	return planned{obj: obj, gvr: m.Resource, ref: refOf(gr, obj), force: c.force(o), digest: digest}, nil
}

// ownerReferences are the reconciler's own (non-controller) references plus, when the child
// can be owned, ork's controller reference to the CR. Only ork names the controller.
func ownerReferences(cr *unstructured.Unstructured, theirs []metav1.OwnerReference, ownable bool) ([]metav1.OwnerReference, error) {
	out := make([]metav1.OwnerReference, 0, len(theirs)+1)
	for _, r := range theirs {
		if r.UID == cr.GetUID() {
			continue // ork's own reference, round-tripped from prepared.children
		}
		if r.Controller != nil && *r.Controller {
			return nil, fmt.Errorf("ownerReferences: %s %s is marked controller: true; ork sets the controller reference (to the custom resource) itself",
				r.Kind, r.Name)
		}
		out = append(out, r)
	}
	if !ownable {
		return out, nil
	}
	return append(out, metav1.OwnerReference{
		APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(), Name: cr.GetName(), UID: cr.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}), nil
}

// force is the entry's forceConflict, else the CRD's, else true.
func (c *controller) force(o resources.Object) bool {
	if o.ForceConflict != nil {
		return *o.ForceConflict
	}
	if f := c.crd.OperatorBox.Reconcile.ForceConflict; f != nil {
		return *f
	}
	return true
}

// ownCached is the cached child when the cache alone decides its ownership: one the cache
// shows as this CR's is taken as it is (the write's uid precondition catches a
// replacement), as is an onCreate child that exists (never written again). nil otherwise.
func (c *controller) ownCached(cr *unstructured.Unstructured, p planned) metav1.Object {
	cached := c.cachedChild(p)
	if w, ok := c.e.writes.get(p.ref); ok && w.owner != cr.GetUID() && (cached == nil || cached.GetResourceVersion() != w.rv) {
		return nil // another CR wrote it after the cache's version: read it
	}
	if cached != nil && (p.createOnly || controlledBy(cr, cached)) {
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
func (c *controller) checkOwner(ctx context.Context, cr *unstructured.Unstructured, p planned) (metav1.Object, error) {
	if _, wrote := c.e.writes.get(p.ref); c.cachedChild(p) == nil && !wrote && c.e.dry == nil {
		return nil, nil
	}
	live, err := c.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed)
	if err != nil {
		return nil, err
	}
	if live != nil && !ownedOrAdoptable(cr, live) {
		return nil, alreadyOwned(p, live)
	}
	if err := c.otherOperator(p, live); err != nil {
		return nil, err
	}
	return live, nil
}

// reasonOperatorConflict: the child is labelled as another operator's (another ork --name).
const reasonOperatorConflict = "OperatorConflict"

// otherOperator refuses a child labelled for another operator. Writing ork's own name over
// it would take it out of the other operator's cache, which would re-apply its own name on
// the delete it hears, and so on, once a second for as long as both run. A child without the
// label (written by an ork before the label existed) is taken.
func (c *controller) otherOperator(p planned, live metav1.Object) error {
	if live == nil {
		return nil
	}
	if v, ok := live.GetLabels()[OperatorLabel]; ok && v != "" && v != c.e.opts.Name {
		return failed(reasonOperatorConflict, "nothing applied: %s %s is labelled %s=%s, another operator's (this ork runs as --name %s); two operators never write one child: give it one operator, or relabel it with kubectl label --overwrite",
			p.gvr.Resource, live.GetName(), OperatorLabel, v, c.e.opts.Name)
	}
	return nil
}

func controlledBy(cr, child metav1.Object) bool {
	ref := metav1.GetControllerOf(child)
	return ref != nil && ref.UID == cr.GetUID()
}

// ownedOrAdoptable: controlled by cr, by nothing, or by an earlier incarnation of cr (same
// kind and name, another uid: names are unique, so that uid no longer exists).
func ownedOrAdoptable(cr *unstructured.Unstructured, child metav1.Object) bool {
	ref := metav1.GetControllerOf(child)
	if ref == nil || ref.UID == cr.GetUID() {
		return true
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == cr.GroupVersionKind().Group && ref.Kind == cr.GetKind() && ref.Name == cr.GetName()
}

func alreadyOwned(p planned, live metav1.Object) error {
	ref := metav1.GetControllerOf(live)
	return failed(reasonAlreadyOwned, "nothing applied: %s %s is controlled by %s %s (uid %s); ork never takes over another owner's object: rename the child or remove the other owner",
		p.gvr.Resource, live.GetName(), ref.Kind, ref.Name, ref.UID)
}

// writeChild writes one child onto live, the object checkOwner decided on (nil: absent),
// under its lock if checkOwner read it. A child ork controls is applied with a uid
// precondition (never onto a replacement someone else created); an orphan or an earlier
// incarnation's child is adopted with a resourceVersion precondition too; an absent one is
// created, and read and judged when the create finds one after all. When a precondition
// fails, the object is read again and the decision taken anew.
func (c *controller) writeChild(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (created, changed bool, err error) {
	if p.createOnly {
		return c.createOnce(ctx, cr, p, live)
	}
	for range childWriteAttempts {
		if err := c.e.mayWrite(keyOf(cr)); err != nil {
			return false, false, err
		}
		if live != nil && !ownedOrAdoptable(cr, live) {
			return false, false, alreadyOwned(p, live)
		}
		if err := c.otherOperator(p, live); err != nil {
			return false, false, err
		}
		if live != nil && live.GetDeletionTimestamp() != nil {
			// Applied onto an object being deleted, the write would "succeed" and the child
			// then vanish: wait until it is gone, and create it anew.
			return false, false, failed(reasonApplyFailed, "%s/%s is being deleted: it is created again once it is gone",
				p.gvr.Resource, p.obj.GetName())
		}
		owned := live != nil && controlledBy(cr, live)
		if c.e.dry != nil {
			return c.dryApply(ctx, cr, p, live, owned)
		}
		if live == nil {
			out, err := c.create(ctx, p)
			if err == nil {
				c.e.writes.wrote(p.ref, p.digest, cr.GetUID(), nil, out)
				return true, false, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return false, false, c.applyError(p, err)
			}
			// Someone has it (the cache had not heard of it, or it is not ork's and so not
			// in the cache): read it, and decide on it at the loop's top.
			if live, err = c.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed); err != nil {
				return false, false, err
			}
			continue
		}
		// Unchanged since ork's own last write, as its write book knows (the same process)
		// or as the object says (the digest it carries, and nobody else's write since).
		if owned && (c.e.writes.unchanged(p.ref, p.digest, live.GetResourceVersion()) || appliedUnchanged(p, live)) {
			return false, false, nil
		}
		target, err := c.handOver(ctx, cr, p, live)
		var out metav1.Object
		if err == nil {
			out, err = c.apply(ctx, p, target, owned)
		}
		if err == nil {
			last, _ := c.e.writes.get(p.ref)
			c.e.writes.wrote(p.ref, p.digest, cr.GetUID(), live, out)
			if live == nil {
				return true, false, nil
			}
			return false, applyChanged(live, out, last.rv), nil
		}
		if !precondition.Failed(err) || fieldConflict(err) {
			return false, false, c.applyError(p, err)
		}
		if live, err = c.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed); err != nil {
			return false, false, err
		}
	}
	return false, false, failed(reasonApplyFailed, "apply %s/%s: the object kept changing under %d writes", p.gvr.Resource, p.obj.GetName(), childWriteAttempts)
}

// createOnce creates an onCreate child that is missing, and never writes it again: a create,
// not an apply, because the cache that said "missing" may lag behind an earlier pass's create
// and an apply would overwrite a user's later edit.
func (c *controller) createOnce(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) (created, changed bool, err error) {
	if live == nil {
		if err := c.e.mayWrite(keyOf(cr)); err != nil {
			return false, false, err
		}
		out, err := c.client(p).Create(ctx, p.obj, metav1.CreateOptions{FieldManager: FieldManager, DryRun: c.e.dry.options()})
		c.countApply(p, err == nil || apierrors.IsAlreadyExists(err))
		switch {
		case err == nil && c.e.dry != nil:
			c.note(cr, runplan.Change{Action: runplan.Create, Ref: p.gvr.Resource + "/" + p.obj.GetName(), Namespace: p.obj.GetNamespace()})
			return true, false, nil
		case err == nil:
			c.e.writes.wrote(p.ref, p.digest, cr.GetUID(), nil, out)
			return true, false, nil
		case !apierrors.IsAlreadyExists(err):
			return false, false, c.applyError(p, err)
		}
		if live, err = c.readChildMeta(ctx, p.gvr, p.ref, reasonApplyFailed); err != nil || live == nil {
			return false, false, err
		}
	}
	// It exists: never written again, but never another owner's either.
	if !ownedOrAdoptable(cr, live) {
		return false, false, alreadyOwned(p, live)
	}
	if err := c.otherOperator(p, live); err != nil {
		return false, false, err
	}
	return false, false, c.labelOperator(ctx, cr, p, live)
}

// labelOperator adds the operator label to an onCreate child an older ork created without
// it, which the child cache (selecting on the label) would otherwise never show: its
// changes and deletion would go unheard. Only the label is written (a merge patch with the
// object's uid as precondition); the object is otherwise never written again.
func (c *controller) labelOperator(ctx context.Context, cr *unstructured.Unstructured, p planned, live metav1.Object) error {
	if live.GetLabels()[OperatorLabel] == c.e.opts.Name || c.e.dry != nil {
		return nil
	}
	if live.GetLabels()[ManagedByLabel] != ManagedByValue {
		// Not written by ork (a user's object of the same name, adopted as onCreate
		// children are): the label would not bring it into the cache, which selects on
		// managed-by too, so writing it changes nothing ork can use.
		return nil
	}
	if err := c.e.mayWrite(keyOf(cr)); err != nil {
		return err
	}
	patch, err := operatorLabelPatch(live.GetUID(), "", c.e.opts.Name)
	if err != nil {
		return err
	}
	out, err := c.e.meta.Resource(p.gvr).Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) || precondition.Failed(err) {
		// Gone or replaced between the read and the patch. The cache never held the old
		// object, so no event will bring this CR back: fail the pass, and its retry
		// decides anew (creates the missing child, or labels the new one).
		return failed(reasonApplyFailed, "%s/%s was deleted or replaced while ork labelled it: decided again on the retry",
			p.gvr.Resource, p.obj.GetName())
	}
	if err != nil {
		return c.applyError(p, err)
	}
	// Recorded as ork's own write, so that the add its label causes in the cache is known
	// for an echo, not a change to pass the owner for.
	c.e.writes.wrote(p.ref, p.digest, cr.GetUID(), live, out)
	return nil
}

// apply server-side applies p onto live: with live's uid as precondition when it exists, and
// its resourceVersion too when adopting it (an absent child is created, not applied). The
// apiserver answers with the object's metadata only: ork needs no more of it, and decoding
// whole objects was the largest part of ork's CPU under load.
func (c *controller) apply(ctx context.Context, p planned, live metav1.Object, owned bool) (metav1.Object, error) {
	obj := p.obj
	if live != nil {
		obj = &unstructured.Unstructured{Object: maps.Clone(p.obj.Object)}
		md := maps.Clone(p.obj.Object["metadata"].(map[string]any))
		obj.Object["metadata"] = md
		md["uid"] = string(live.GetUID())
		// Adopting, the version decided on must be the one written to. With the children
		// payload on, always: then a write that changed nothing is known for one, and the
		// version it returns is not taken for ork's own (it may be another writer's status
		// update the reconciler must hear of).
		if !owned || c.childrenPayload {
			md["resourceVersion"] = live.GetResourceVersion()
		}
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", p.gvr.Resource, p.obj.GetName(), err)
	}
	out, err := c.e.meta.Resource(p.gvr).Namespace(p.obj.GetNamespace()).Patch(ctx, p.obj.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &p.force})
	c.countApply(p, err == nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// create creates p, which ork believes absent: the create fails with AlreadyExists when any
// object of that name exists, so it never writes over one that was not judged. Its fields
// are the field manager's Update entry; the next apply takes them over (handOver).
func (c *controller) create(ctx context.Context, p planned) (metav1.Object, error) {
	out, err := c.client(p).Create(ctx, p.obj, metav1.CreateOptions{FieldManager: FieldManager})
	c.countApply(p, err == nil || apierrors.IsAlreadyExists(err))
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *controller) client(p planned) dynamic.ResourceInterface {
	return c.e.dyn.Resource(p.gvr).Namespace(p.obj.GetNamespace())
}

func (c *controller) countApply(p planned, ok bool) {
	result := "success"
	if !ok {
		result = "error"
	}
	c.e.opts.Metrics.ApplyTotal.WithLabelValues(c.crd.Name, p.obj.GetKind(), result).Inc()
}

// cachedChild is the child from its informer's cache (its metadata at least), or nil.
func (c *controller) cachedChild(p planned) metav1.Object {
	for _, ch := range c.children {
		if ch.gvr.GroupResource() != p.ref.gr {
			continue
		}
		key := p.ref.name
		if p.ref.namespace != "" {
			key = p.ref.namespace + "/" + p.ref.name
		}
		obj, exists, err := ch.informer.GetIndexer().GetByKey(key)
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
func (c *controller) applyError(p planned, err error) error {
	if errors.Is(err, errNotLeader) {
		return errNotLeader // not a failed apply: this replica stops
	}
	what := fmt.Sprintf("%s/%s", p.gvr.Resource, p.obj.GetName())
	var status apierrors.APIStatus
	switch {
	case fieldConflict(err) && errors.As(err, &status):
		pe := failed(reasonApplyFailed, "apply %s: conflict with another field manager (forceConflict is false): %s", what, status.Status().Message)
		pe.managers = conflictingManagers(err)
		return pe
	case precondition.UIDMismatch(err):
		return failed(reasonApplyFailed, "apply %s: the object was deleted and created again while ork wrote it: %v", what, err)
	case apierrors.IsConflict(err):
		return failed(reasonApplyFailed, "apply %s: the object changed while ork wrote it (resourceVersion precondition): %v", what, err)
	}
	return failed(reasonApplyFailed, "apply %s: %v", what, err)
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
