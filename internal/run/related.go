package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/run/informers"
	"github.com/orkspace/ork/internal/run/kobj"
)

// Reasons of the passes payload.related holds back.
const (
	// ReasonRelatedObjectMissing: a required related object is not there; no call was made.
	ReasonRelatedObjectMissing = "RelatedObjectMissing"
	reasonRelatedInvalid       = "RelatedObjectInvalid"
	reasonRelatedReadFailed    = "RelatedObjectReadFailed"
	// EventTooManyRelated is the Warning Event of a selector that matched more than
	// related.MaxSelected objects: the list sent was cut. It is also the reason of
	// ConditionRelatedTruncated.
	EventTooManyRelated = "TooManyRelatedObjects"
	// ConditionRelatedTruncated is True while a selector entry matches more objects than
	// are sent, and absent otherwise: the reconciler decides from a partial list.
	ConditionRelatedTruncated = "RelatedObjectsTruncated"
)

// relatedFanOut is the most custom resources one related change passes in the fast lane:
// a change concerning more (a ConfigMap every tenant reads) is the slow lane's, so that it
// cannot hold back the real changes of other custom resources.
const relatedFanOut = 100

// relatedWatch reads a CRD's payload.related objects at pass time and watches their types'
// metadata, so that a change passes again the custom resources that read the object in their
// last pass (index).
type relatedWatch struct {
	deps    relatedDeps
	entries []relatedEntry
	index   *related.Index
	// informers are the metadata-only watches: one per type, and one per constant-named Secret.
	informers []relatedInformer
	digests   specDigests
	// checks are the changes whose digest runChecks reads (relatedchecks.go); nil runs
	// them in changed.
	checks *statusChecks
	// owners is the uid of the CR whose references the index holds, by key, so that a
	// released bucket's references can be dropped (forgetObjects); mu makes that drop and a
	// pass's Set one step each.
	mu     sync.Mutex
	owners map[string]types.UID
}

// relatedDeps is all a related watch needs of its controller: the clients, the namespaces
// ork watches, and two callbacks; never the controller itself.
type relatedDeps struct {
	dyn             dynamic.Interface
	meta            metadata.Interface
	watchNamespaces []string
	// changed queues the CR of key, whose last pass read an object that changed
	// (controller.relatedChanged); fast picks the fast lane.
	changed func(key string, fast bool)
	// event records an Event on a CR (controller.event).
	event func(cr *unstructured.Unstructured, typ, reason, msg string)
}

// relatedDeps are c's dependencies for its related watch.
func (c *controller) relatedDeps() relatedDeps {
	return relatedDeps{dyn: c.e.dyn, meta: c.e.meta, watchNamespaces: c.e.opts.WatchNamespaces,
		changed: c.relatedChanged, event: c.event}
}

// relatedInformer is one watch and the type it watches: an event carries no type of its own.
type relatedInformer struct {
	gvr schema.GroupVersionResource
	inf informers.Scoped
}

type relatedEntry struct {
	*related.Entry
	gvr schema.GroupVersionResource
	// watched is false for a Secret with a templated name: read at pass time only (ork never
	// lists or watches every Secret), so a missing one is retried with backoff.
	watched bool
	// watch is the metadata watch of the entry's objects (when watched): its versions make
	// the reads cache reads no older than what ork has seen.
	watch informers.Scoped
}

// newRelatedWatch resolves each entry's type through discovery and sets up the watches; nil
// when the CRD declares no related objects.
func newRelatedWatch(c *controller) (*relatedWatch, error) {
	rem := c.crd.OperatorBox.Reconcile.Remote
	if rem == nil || len(rem.Payload.Related) == 0 {
		return nil, nil
	}
	w := &relatedWatch{deps: c.relatedDeps(), index: related.NewIndex(), checks: newStatusChecks()}
	// One watch per type, one per constant-named Secret; each over the namespaces its
	// entries can name (the RBAC rbacgen grants is no wider).
	type watchKey struct {
		gvr  schema.GroupVersionResource
		name string
	}
	var order []watchKey
	scopes := map[watchKey]*watchScope{}
	for i, r := range rem.Payload.Related {
		at := fmt.Sprintf("payload.related[%d]", i)
		e, err := related.Compile(at, r)
		if err != nil {
			return nil, err
		}
		gvr, err := c.e.relatedGVR(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if e.Namespaced, err = c.e.scopeOf(gvr); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		e.Secret = gvr.Group == "" && gvr.Resource == "secrets"
		e.WatchNamespaces = c.e.opts.WatchNamespaces
		re := relatedEntry{Entry: e, gvr: gvr, watched: !e.Secret || e.ConstantName()}
		w.entries = append(w.entries, re)
		if !re.watched {
			continue
		}
		k := watchKey{gvr: gvr}
		if e.Secret {
			k.name = r.Name
		}
		sc := scopes[k]
		if sc == nil {
			sc = &watchScope{namespaced: e.Namespaced}
			scopes[k] = sc
			order = append(order, k)
		}
		sc.add(e.ConstantNamespace())
	}
	var watches []relatedInformer
	built := map[watchKey]informers.Scoped{}
	for _, k := range order {
		built[k] = w.watch(k.gvr, scopes[k], k.name)
		watches = append(watches, relatedInformer{k.gvr, built[k]})
	}
	for i, e := range w.entries {
		if e.watched {
			k := watchKey{gvr: e.gvr}
			if e.Secret {
				k.name = rem.Payload.Related[i].Name
			}
			w.entries[i].watch = built[k]
		}
	}
	for _, ri := range watches {
		w.informers = append(w.informers, ri)
		if err := ri.inf.SetTransform(slimRelated); err != nil {
			return nil, fmt.Errorf("related transform: %w", err)
		}
		gvr := ri.gvr
		if _, err := ri.inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				if !initial { // the first list: the custom resources' own initial adds pass them
					w.changed(gvr, nil, obj)
				}
			},
			UpdateFunc: func(old, obj any) { w.changed(gvr, old, obj) },
			DeleteFunc: func(obj any) {
				if u, ok := kobj.DeletedMeta(obj); ok {
					w.digests.forget(gvr.GroupResource(), u.GetNamespace(), u.GetName())
				}
				w.changed(gvr, nil, obj)
			},
		}); err != nil {
			return nil, fmt.Errorf("related event handler: %w", err)
		}
	}
	return w, nil
}

// relatedGVR is the resource of a related entry: its kind through the REST mapper, or its
// plural through discovery, in the entry's version or the preferred one.
func (e *Engine) relatedGVR(r katalog.Related) (schema.GroupVersionResource, error) {
	if r.Kind != "" {
		m, err := e.mapping(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind})
		if err != nil {
			return schema.GroupVersionResource{}, fmt.Errorf("%s %s is not served by the cluster: %w", r.Group, r.Kind, err)
		}
		return m.Resource, nil
	}
	return e.resolve(schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Plural})
}

// scopeOf reports whether gvr is namespaced.
func (e *Engine) scopeOf(gvr schema.GroupVersionResource) (bool, error) {
	return e.namespaced(gvr)
}

// watchScope is where one related watch looks: the watched namespaces (or all) when an
// entry's namespace is templated or the custom resource's, else only the constant
// namespaces the entries name.
type watchScope struct {
	namespaced bool
	wide       bool
	constant   []string
}

func (s *watchScope) add(constantNS string) {
	switch {
	case constantNS == "":
		s.wide = true
	case !slices.Contains(s.constant, constantNS):
		s.constant = append(s.constant, constantNS)
	}
}

// namespaces are the namespaces to watch, nil for every namespace.
func (s *watchScope) namespaces(watched []string) []string {
	if !s.namespaced {
		return nil
	}
	if s.wide {
		return watched
	}
	return slices.Sorted(slices.Values(s.constant))
}

// watch is a metadata-only informer on gvr over the namespaces of scope, limited to one name
// when name is set (a Secret: RBAC grants it by resourceNames).
func (w *relatedWatch) watch(gvr schema.GroupVersionResource, scope *watchScope, name string) informers.Scoped {
	tweak := func(o *metav1.ListOptions) {
		if name != "" {
			o.FieldSelector = "metadata.name=" + name
		}
	}
	build := func(ns string) cache.SharedIndexInformer {
		return metadatainformer.NewFilteredMetadataInformer(w.deps.meta, gvr, ns, 0, cache.Indexers{}, tweak).Informer()
	}
	namespaces := scope.namespaces(w.deps.watchNamespaces)
	if len(namespaces) == 0 {
		return informers.AllNamespaces(build(metav1.NamespaceAll))
	}
	return informers.PerNamespace(namespaces, build)
}

func (w *relatedWatch) hasSynced() bool {
	if w == nil {
		return true
	}
	return len(w.unsynced()) == 0
}

// unsynced names the related types whose watch has not listed yet, for waitSynced's error.
func (w *relatedWatch) unsynced() []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, ri := range w.informers {
		if !ri.inf.HasSynced() {
			out = append(out, "related "+ri.gvr.GroupResource().String())
		}
	}
	return out
}

func (w *relatedWatch) run(stop <-chan struct{}) {
	if w == nil {
		return
	}
	var wg sync.WaitGroup
	for _, ri := range w.informers {
		wg.Go(func() { ri.inf.Run(stop) })
	}
	wg.Go(func() { w.runChecks(stop) })
	wg.Wait() // every informer has returned: a stopped engine leaves no goroutine behind
}

// forget drops a deleted custom resource's references.
func (w *relatedWatch) forget(key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.index.Drop(key)
	delete(w.owners, key)
}

// set records the references of key's CR uid.
func (w *relatedWatch) set(key string, uid types.UID, targets []related.Target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.index.Set(key, targets)
	if w.owners == nil {
		w.owners = map[string]types.UID{}
	}
	w.owners[key] = uid
}

// forgetObjects drops the references of the CRs for which gone is true: their bucket went
// to another replica, and a change of what they read must not queue them here.
func (w *relatedWatch) forgetObjects(gone func(types.UID) bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, uid := range w.owners {
		if gone(uid) {
			w.index.Drop(key)
			delete(w.owners, key)
		}
	}
}

// changed passes again the custom resources whose last pass read the object. A re-list of
// an unchanged object is no change; neither is a status-only change unless the reference
// has watchStatus.
func (w *relatedWatch) changed(gvr schema.GroupVersionResource, oldObj, obj any) {
	u, ok := kobj.DeletedMeta(obj)
	if !ok {
		return
	}
	ch := related.Change{Resource: gvr.GroupResource(), Namespace: u.GetNamespace(), Name: u.GetName(), New: labels.Set(u.GetLabels()), Old: labels.Set(u.GetLabels())}
	old, isUpdate := kobj.DeletedMeta(oldObj)
	if isUpdate {
		if old.GetResourceVersion() == u.GetResourceVersion() {
			return
		}
		ch.Old = labels.Set(old.GetLabels())
		ch.StatusOnly = kobj.ChildStatusOnly(oldObj, obj)
	}
	keys := w.index.Affected(ch)
	if isUpdate && !ch.StatusOnly && len(keys) > 0 && needsDigest(gvr, old, u) {
		ck := statusCheck{key: digestKey(ch.Resource, ch.Namespace, ch.Name), gvr: gvr, change: ch, old: old, new: u}
		if w.checks != nil {
			// The digest needs a read: not on the informer's goroutine, which would hold
			// every later event of the type behind it (up to digestRead); queued without
			// waiting, in place of a check of the object still waiting.
			w.checks.add(ck)
			return
		}
		w.finishCheck(context.Background(), ck)
		return
	}
	w.pass(keys)
}

// statusCheck is a change of a kind without metadata.generation whose digest decides
// whether more than its status changed. key is its object's digestKey.
type statusCheck struct {
	key      string
	gvr      schema.GroupVersionResource
	change   related.Change
	old, new metav1.Object
}

// finishCheck passes the custom resources that read ck's object unless only its status
// changed.
func (w *relatedWatch) finishCheck(ctx context.Context, ck statusCheck) {
	ch := ck.change
	if w.statusOnly(ctx, ck.gvr, ck.old, ck.new) {
		ch.StatusOnly = true
	}
	w.pass(w.index.Affected(ch))
}

// pass queues the keys of one change: in the fast lane unless it concerns more than
// relatedFanOut of them.
func (w *relatedWatch) pass(keys []string) {
	fast := len(keys) <= relatedFanOut
	for _, key := range keys {
		w.deps.changed(key, fast)
	}
}

// relatedChanged queues key for a related object's change, like childChanged: no sooner
// than ChildMinInterval after its last pass, in the fast lane when fast.
func (c *controller) relatedChanged(key string, fast bool) {
	c.countTrigger(TriggerRelated)
	o := addOpts{trigger: TriggerRelated, minInterval: c.e.opts.ChildMinInterval}
	if fast {
		o.lane = laneFast
	}
	c.add(key, o)
}

// relatedRead is what one pass read: the objects by entry, their names for the trace, and
// the messages of selector entries cut at related.MaxSelected.
type relatedRead struct {
	objects map[string][]map[string]any
	names   []string
	cut     []string
}

// read resolves every entry for the pass's custom resource, records the references in the
// index (before reading, so that a change racing the read still finds them), and reads the
// objects. held is the decision of a pass that must not call: a reference that does not
// resolve, a read that failed, or a required object that is missing.
func (w *relatedWatch) read(ctx context.Context, in input) (relatedRead, *decision) {
	if in.gone {
		w.forget(in.key)
	}
	refs := make([]related.Ref, len(w.entries))
	resolved := make([]bool, len(w.entries))
	targets := make([]related.Target, 0, len(w.entries))
	var invalid []string
	for i, e := range w.entries {
		ref, err := e.Resolve(in.cr.Object)
		if err != nil {
			invalid = append(invalid, err.Error())
			continue
		}
		refs[i], resolved[i] = ref, true
		if e.watched {
			targets = append(targets, related.Target{Resource: e.gvr.GroupResource(), Ref: ref, WatchStatus: e.WatchStatus})
		}
	}
	if !in.gone {
		// Also when a reference did not resolve: a change of an object the others name
		// passes the CR again (it may be what makes the CR right).
		w.set(in.key, in.cr.GetUID(), targets)
	}
	if len(invalid) > 0 && !in.deleting {
		d := failure(reasonRelatedInvalid, "%s", strings.Join(invalid, "; "))
		return relatedRead{}, &d
	}
	out := make(map[string][]map[string]any, len(w.entries))
	var missing, read, cut []string
	retry := false
	for i, e := range w.entries {
		if !resolved[i] {
			out[e.As] = []map[string]any{} // a delete is not held by a reference it cannot resolve
			continue
		}
		objs, cutMsg, err := w.fetch(ctx, e, refs[i], in)
		if err != nil {
			d := failure(reasonRelatedReadFailed, "read related %s (%s %s): %v", e.As, e.gvr.Resource, refs[i], err)
			return relatedRead{names: read}, &d
		}
		if cutMsg != "" {
			cut = append(cut, cutMsg)
		}
		out[e.As] = objs
		read = append(read, readNames(e, refs[i], objs)...)
		if e.Required && len(objs) == 0 {
			missing = append(missing, fmt.Sprintf("%s (%s %s)", e.As, e.gvr.Resource, refs[i]))
			retry = retry || !e.watched
		}
	}
	if len(missing) > 0 && !in.deleting {
		// A watched object's arrival passes the CR again: no backoff needed. A templated
		// Secret is not watched: retry with backoff.
		d := decision{action: actionDone, reason: ReasonRelatedObjectMissing,
			message: "required related objects missing, the reconciler was not called: " + strings.Join(missing, ", ")}
		if retry {
			d.action = actionBackoff
		}
		return relatedRead{names: read}, &d
	}
	return relatedRead{objects: out, names: read, cut: cut}, nil
}

// readNames name what one entry read, for the decision trace: each object with its
// resourceVersion, or the reference and "(none)".
func readNames(e relatedEntry, ref related.Ref, objs []map[string]any) []string {
	if len(objs) == 0 {
		return []string{fmt.Sprintf("%s: %s %s (none)", e.As, e.gvr.Resource, ref)}
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if ns, _ := md["namespace"].(string); ns != "" {
			name = ns + "/" + name
		}
		out[i] = fmt.Sprintf("%s: %s %s@%v", e.As, e.gvr.Resource, name, md["resourceVersion"])
	}
	return out
}

// fetch reads the objects of one reference: a GET by name, or a LIST by selector cut at
// related.MaxSelected (a Warning Event says so, and cut is the message for the
// condition). A Secret's data goes only with allowSecrets.
func (w *relatedWatch) fetch(ctx context.Context, e relatedEntry, ref related.Ref, in input) (objs []map[string]any, cut string, err error) {
	res := w.deps.dyn.Resource(e.gvr).Namespace(ref.Namespace)
	if ref.Selector == nil {
		u, err := res.Get(ctx, ref.Name, metav1.GetOptions{ResourceVersion: e.cachedRV(ref)})
		if apierrors.IsNotFound(err) {
			return []map[string]any{}, "", nil
		}
		if err != nil {
			return nil, "", err
		}
		objs = append(objs, u.Object)
	} else {
		opts := metav1.ListOptions{LabelSelector: ref.Selector.String(), Limit: related.MaxSelected + 1}
		if rv := e.watch.LastSyncRV(ref.Namespace); e.watched && rv != "" {
			opts.ResourceVersion, opts.ResourceVersionMatch = rv, metav1.ResourceVersionMatchNotOlderThan
		}
		list, err := res.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		for i := range list.Items {
			objs = append(objs, list.Items[i].Object)
		}
		if len(objs) > related.MaxSelected || list.GetContinue() != "" {
			objs = objs[:min(len(objs), related.MaxSelected)]
			cut = fmt.Sprintf("payload.related %s: the selector %s matches more than %d %s: only the first %d are sent",
				e.As, ref.Selector, related.MaxSelected, e.gvr.Resource, related.MaxSelected)
			if !in.gone {
				w.deps.event(in.cr, "Warning", EventTooManyRelated, cut)
			}
		}
	}
	if objs == nil {
		objs = []map[string]any{}
	}
	if e.watched && !e.WatchStatus {
		for _, o := range objs {
			w.digests.remember(e.gvr, o)
		}
	}
	if e.Secret {
		for _, o := range objs {
			// kubectl apply's copy of the manifest holds the data in clear: never sent.
			if md, ok := o["metadata"].(map[string]any); ok {
				if ann, ok := md["annotations"].(map[string]any); ok {
					delete(ann, corev1.LastAppliedConfigAnnotation)
				}
			}
			if !e.AllowSecrets {
				delete(o, "data")
				delete(o, "stringData")
			}
		}
	}
	return objs, cut, nil
}

// cachedRV is the resourceVersion the watch holds for ref's object: a GET at it is served
// from the apiserver's watch cache, no older than the change that passed the CR. "" (a
// quorum read) when the object is not watched or not in the cache (not created yet, as
// far as ork knows: a read at the cache's version could miss it).
func (e relatedEntry) cachedRV(ref related.Ref) string {
	if !e.watched || len(e.watch.Informers()) == 0 {
		return ""
	}
	key := ref.Name
	if ref.Namespace != "" {
		key = ref.Namespace + "/" + ref.Name
	}
	obj, ok, err := e.watch.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// slimRelated is the related watches' transform: the cache keeps labels and versions, not
// managedFields nor kubectl apply's copy of the manifest (a Secret's data in clear).
func slimRelated(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if ann := m.GetAnnotations(); ann != nil {
			if _, has := ann[corev1.LastAppliedConfigAnnotation]; has {
				delete(ann, corev1.LastAppliedConfigAnnotation)
				m.SetAnnotations(ann)
			}
		}
	}
	return obj, nil
}
