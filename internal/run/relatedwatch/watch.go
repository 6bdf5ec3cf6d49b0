// Package relatedwatch reads a CRD's payload.related objects at pass time and watches their
// types' metadata, so that a change passes again the custom resources that read the object
// in their last pass. It knows its controller only through Deps: two clients, the watched
// namespaces and two callbacks. Its watches are not sharded: every replica watches every
// related object, and holds references only for the CRs of its own buckets
// (docs/architecture.md).
package relatedwatch

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

// Reasons of the passes payload.related holds back, and of what it reports.
const (
	// ReasonObjectMissing: a required related object is not there; no call was made.
	ReasonObjectMissing = "RelatedObjectMissing"
	// ReasonInvalid: a reference does not resolve from the custom resource.
	ReasonInvalid = "RelatedObjectInvalid"
	// ReasonReadFailed: a related object could not be read.
	ReasonReadFailed = "RelatedObjectReadFailed"
	// EventTooManyObjects is the Warning Event of a selector that matched more than
	// related.MaxSelected objects: the list sent was cut. It is also the reason of
	// ConditionTruncated.
	EventTooManyObjects = "TooManyRelatedObjects"
	// ConditionTruncated is True while a selector entry matches more objects than are
	// sent, and absent otherwise: the reconciler decides from a partial list.
	ConditionTruncated = "RelatedObjectsTruncated"
)

// FanOut is the most custom resources one related change passes in the fast lane: a change
// concerning more (a ConfigMap every tenant reads) is the slow lane's, so that it cannot
// hold back the real changes of other custom resources.
const FanOut = 100

// Deps is all a related watch needs of its controller: the clients, the namespaces ork
// watches, and two callbacks; never the controller itself.
type Deps struct {
	Dyn             dynamic.Interface
	Meta            metadata.Interface
	WatchNamespaces []string
	// Changed queues the CR of key, whose last pass read an object that changed; fast
	// picks the fast lane.
	Changed func(key string, fast bool)
	// Event records an Event on a CR.
	Event func(cr *unstructured.Unstructured, typ, reason, msg string)
	// Owns says whether the CR of uid is this replica's to pass (its bucket is held here);
	// nil: every CR is. A pass still in flight when its bucket left records nothing after
	// ForgetObjects dropped the bucket's references.
	Owns func(types.UID) bool
}

// Watch reads a CRD's payload.related objects at pass time and watches their types'
// metadata, so that a change passes again the custom resources that read the object in their
// last pass (index).
type Watch struct {
	deps    Deps
	entries []entry
	index   *related.Index
	// informers are the metadata-only watches: one per type, and one per constant-named Secret.
	informers []watchInformer
	digests   specDigests
	// checks are the changes whose digest runChecks reads (checks.go); nil runs
	// them in changed.
	checks *statusChecks
	// owners is the uid of the CR whose references the index holds, by key, so that a
	// released bucket's references can be dropped (forgetObjects); mu makes that drop and a
	// pass's Set one step each.
	mu     sync.Mutex
	owners map[string]types.UID
}

// watchInformer is one watch and the type it watches: an event carries no type of its own.
type watchInformer struct {
	gvr schema.GroupVersionResource
	inf informers.Scoped
}

type entry struct {
	*related.Entry
	gvr schema.GroupVersionResource
	// watched is false for a Secret with a templated name: read at pass time only (ork never
	// lists or watches every Secret), so a missing one is retried with backoff.
	watched bool
	// watch is the metadata watch of the entry's objects (when watched): its versions make
	// the reads cache reads no older than what ork has seen.
	watch informers.Scoped
}

// New resolves each entry's type (resolve, namespaced) and sets up the watches; nil when
// there are no entries.
func New(entries []katalog.Related, deps Deps, resolve func(katalog.Related) (schema.GroupVersionResource, error),
	namespaced func(schema.GroupVersionResource) (bool, error)) (*Watch, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	w := &Watch{deps: deps, index: related.NewIndex(), checks: newStatusChecks()}
	// One watch per type, one per constant-named Secret; each over the namespaces its
	// entries can name (the RBAC rbacgen grants is no wider).
	type watchKey struct {
		gvr  schema.GroupVersionResource
		name string
	}
	var order []watchKey
	scopes := map[watchKey]*watchScope{}
	for i, r := range entries {
		at := fmt.Sprintf("payload.related[%d]", i)
		e, err := related.Compile(at, r)
		if err != nil {
			return nil, err
		}
		gvr, err := resolve(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if e.Namespaced, err = namespaced(gvr); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		e.Secret = gvr.Group == "" && gvr.Resource == "secrets"
		e.WatchNamespaces = deps.WatchNamespaces
		re := entry{Entry: e, gvr: gvr, watched: !e.Secret || e.ConstantName()}
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
	var watches []watchInformer
	built := map[watchKey]informers.Scoped{}
	for _, k := range order {
		built[k] = w.watch(k.gvr, scopes[k], k.name)
		watches = append(watches, watchInformer{k.gvr, built[k]})
	}
	for i, e := range w.entries {
		if e.watched {
			k := watchKey{gvr: e.gvr}
			if e.Secret {
				k.name = entries[i].Name
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
func (w *Watch) watch(gvr schema.GroupVersionResource, scope *watchScope, name string) informers.Scoped {
	tweak := func(o *metav1.ListOptions) {
		if name != "" {
			o.FieldSelector = "metadata.name=" + name
		}
	}
	build := func(ns string) cache.SharedIndexInformer {
		return metadatainformer.NewFilteredMetadataInformer(w.deps.Meta, gvr, ns, 0, cache.Indexers{}, tweak).Informer()
	}
	namespaces := scope.namespaces(w.deps.WatchNamespaces)
	if len(namespaces) == 0 {
		return informers.AllNamespaces(build(metav1.NamespaceAll))
	}
	return informers.PerNamespace(namespaces, build)
}

func (w *Watch) HasSynced() bool {
	if w == nil {
		return true
	}
	return len(w.Unsynced()) == 0
}

// Unsynced names the related types whose watch has not listed yet, for waitSynced's error.
func (w *Watch) Unsynced() []string {
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

func (w *Watch) Run(stop <-chan struct{}) {
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

// Forget drops a deleted custom resource's references.
func (w *Watch) Forget(key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.index.Drop(key)
	delete(w.owners, key)
}

// Readers are the keys of the CRs whose last pass read the object ch changed.
func (w *Watch) Readers(ch related.Change) []string { return w.index.Affected(ch) }

// Record records the references of key's CR uid (as its pass's Read does).
func (w *Watch) Record(key string, uid types.UID, targets []related.Target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deps.Owns != nil && !w.deps.Owns(uid) {
		return
	}
	w.index.Set(key, targets)
	if w.owners == nil {
		w.owners = map[string]types.UID{}
	}
	w.owners[key] = uid
}

// ForgetObjects drops the references of the CRs for which gone is true: their bucket went
// to another replica, and a change of what they read must not queue them here.
func (w *Watch) ForgetObjects(gone func(types.UID) bool) {
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
func (w *Watch) changed(gvr schema.GroupVersionResource, oldObj, obj any) {
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
func (w *Watch) finishCheck(ctx context.Context, ck statusCheck) {
	ch := ck.change
	if w.statusOnly(ctx, ck.gvr, ck.old, ck.new) {
		ch.StatusOnly = true
	}
	w.pass(w.index.Affected(ch))
}

// pass queues the keys of one change: in the fast lane unless it concerns more than
// FanOut of them.
func (w *Watch) pass(keys []string) {
	fast := len(keys) <= FanOut
	for _, key := range keys {
		w.deps.Changed(key, fast)
	}
}

// Result is what one pass read: the objects by entry, their names for the trace, and
// the messages of selector entries cut at related.MaxSelected.
type Result struct {
	Objects map[string][]map[string]any
	Names   []string
	Cut     []string
}

// Hold is why a pass must not call: a reference that does not resolve, a read that failed
// (Backoff: retry with the pass's backoff), or a required object that is missing (Backoff
// only when it is not watched, so its arrival would pass the CR by itself).
type Hold struct {
	Reason, Message string
	Backoff         bool
}

// Read resolves every entry for the pass of key's custom resource cr (gone: its delete is
// done, deleting: its delete is under way), records the references in the index (before
// reading, so that a change racing the read still finds them), and reads the objects.
func (w *Watch) Read(ctx context.Context, key string, cr *unstructured.Unstructured, gone, deleting bool) (Result, *Hold) {
	if gone {
		w.Forget(key)
	}
	refs := make([]related.Ref, len(w.entries))
	resolved := make([]bool, len(w.entries))
	targets := make([]related.Target, 0, len(w.entries))
	var invalid []string
	for i, e := range w.entries {
		ref, err := e.Resolve(cr.Object)
		if err != nil {
			invalid = append(invalid, err.Error())
			continue
		}
		refs[i], resolved[i] = ref, true
		if e.watched {
			targets = append(targets, related.Target{Resource: e.gvr.GroupResource(), Ref: ref, WatchStatus: e.WatchStatus})
		}
	}
	if !gone {
		// Also when a reference did not resolve: a change of an object the others name
		// passes the CR again (it may be what makes the CR right).
		w.Record(key, cr.GetUID(), targets)
	}
	if len(invalid) > 0 && !deleting {
		return Result{}, &Hold{Reason: ReasonInvalid, Message: strings.Join(invalid, "; "), Backoff: true}
	}
	out := make(map[string][]map[string]any, len(w.entries))
	var missing, read, cut []string
	retry := false
	for i, e := range w.entries {
		if !resolved[i] {
			out[e.As] = []map[string]any{} // a delete is not held by a reference it cannot resolve
			continue
		}
		objs, cutMsg, err := w.fetch(ctx, e, refs[i], cr, gone)
		if err != nil {
			return Result{Names: read}, &Hold{Reason: ReasonReadFailed, Backoff: true,
				Message: fmt.Sprintf("read related %s (%s %s): %v", e.As, e.gvr.Resource, refs[i], err)}
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
	if len(missing) > 0 && !deleting {
		// A watched object's arrival passes the CR again: no backoff needed. A templated
		// Secret is not watched: retry with backoff.
		return Result{Names: read}, &Hold{Reason: ReasonObjectMissing, Backoff: retry,
			Message: "required related objects missing, the reconciler was not called: " + strings.Join(missing, ", ")}
	}
	return Result{Objects: out, Names: read, Cut: cut}, nil
}

// readNames name what one entry read, for the decision trace: each object with its
// resourceVersion, or the reference and "(none)".
func readNames(e entry, ref related.Ref, objs []map[string]any) []string {
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
func (w *Watch) fetch(ctx context.Context, e entry, ref related.Ref, cr *unstructured.Unstructured, gone bool) (objs []map[string]any, cut string, err error) {
	res := w.deps.Dyn.Resource(e.gvr).Namespace(ref.Namespace)
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
			if !gone {
				w.deps.Event(cr, "Warning", EventTooManyObjects, cut)
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
func (e entry) cachedRV(ref related.Ref) string {
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
