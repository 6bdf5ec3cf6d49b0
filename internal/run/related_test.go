package run

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/run/informers"
)

// A related object's change passes the CRs that read it: in the fast lane while it concerns
// at most relatedFanOut of them, in the slow lane past that (one shared ConfigMap must not
// crowd out the real changes of other CRs); a re-list of the same version passes nobody.
func TestRelatedChangeFanOutPicksTheLane(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		crs        int
		fast, slow float64
	}{{1, 1, 0}, {relatedFanOut, relatedFanOut, 0}, {relatedFanOut + 1, 0, relatedFanOut + 1}} {
		t.Run(fmt.Sprint(tc.crs), func(t *testing.T) {
			m := NewMetrics()
			q := newLaneQueue("app", time.Millisecond, time.Second, m)
			defer q.ShutDown()
			c := &controller{e: &Engine{gate: allMine{}, opts: Options{Metrics: m}}, crd: &katalog.CRD{Name: "app"}, ledger: newLedger(), lanes: q, queue: q}
			w := &relatedWatch{deps: c.relatedDeps(), index: related.NewIndex(), entries: []relatedEntry{{Entry: &related.Entry{As: "config"}, gvr: cms, watched: true}}}
			for i := range tc.crs {
				w.index.Set(fmt.Sprintf("ns/cr-%03d", i), []related.Target{{Resource: cms.GroupResource(), Ref: related.Ref{Namespace: "ns", Name: "shared"}}})
			}
			w.index.Set("ns/unrelated", []related.Target{{Resource: cms.GroupResource(), Ref: related.Ref{Namespace: "ns", Name: "other"}}})
			obj := func(rv string) *metav1.PartialObjectMetadata {
				return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shared", ResourceVersion: rv}}
			}
			w.changed(cms, obj("1"), obj("1")) // a re-list: no change
			if q.Len() != 0 {
				t.Fatalf("a re-list of the same version queued %d keys", q.Len())
			}
			w.changed(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, obj("1"), obj("2"))
			if q.Len() != 0 {
				t.Fatalf("a Secret of the name the CRs' ConfigMap has queued %d keys", q.Len())
			}
			w.changed(cms, obj("1"), obj("2"))
			if q.Len() != tc.crs {
				t.Errorf("%d keys queued, want the %d CRs that read the object", q.Len(), tc.crs)
			}
			fast := testutil.ToFloat64(m.lanes.depth.WithLabelValues("app", "fast"))
			slow := testutil.ToFloat64(m.lanes.depth.WithLabelValues("app", "slow"))
			if fast != tc.fast || slow != tc.slow {
				t.Errorf("fast %v, slow %v; want %v and %v", fast, slow, tc.fast, tc.slow)
			}
		})
	}
}

// A pass that raced its CR's delete recorded references after onDelete forgot them: the
// key's next pass finds no object and forgets them, or a change of the ConfigMap would queue
// a CR that no longer exists, for ever.
func TestAPassThatFindsNoObjectForgetsItsRelatedReferences(t *testing.T) {
	m := NewMetrics()
	q := newLaneQueue("app", time.Millisecond, time.Second, m)
	defer q.ShutDown()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	w := &relatedWatch{index: related.NewIndex()}
	c := &controller{e: &Engine{gate: allMine{}, opts: Options{Metrics: m}, writes: newWriteBook()}, crd: &katalog.CRD{Name: "app"},
		ledger: newLedger(), lanes: q, queue: q, informer: informers.AllNamespaces(inf), related: w}
	cms := schema.GroupResource{Resource: "configmaps"}
	w.index.Set("ns/a", []related.Target{{Resource: cms, Ref: related.Ref{As: "config", Namespace: "ns", Name: "a-config"}}})
	c.ledger.note("ns/a", TriggerRelated)
	c.handle(context.Background(), "ns/a")
	if got := w.index.Targets("ns/a"); len(got) != 0 {
		t.Errorf("after a pass that found no object the index holds %v for it, want nothing", got)
	}
}

// A reference that does not resolve holds a pass, but the references that did are indexed
// (a change of one passes the CR again); a delete is not held by it: that entry goes as [].
func TestAnUnresolvedReferenceKeepsTheOthersAndHoldsNoDelete(t *testing.T) {
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	shared := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "shared", "namespace": "ns"}}}
	c := &controller{e: &Engine{gate: allMine{}, dyn: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), shared)}}
	entry := func(r katalog.Related) relatedEntry {
		e, err := related.Compile("payload.related", r)
		if err != nil {
			t.Fatal(err)
		}
		e.Namespaced = true
		return relatedEntry{Entry: e, gvr: cmGVR, watched: true}
	}
	w := &relatedWatch{deps: c.relatedDeps(), index: related.NewIndex(), entries: []relatedEntry{
		entry(katalog.Related{As: "shared", Kind: "ConfigMap", Name: "shared"}),
		entry(katalog.Related{As: "broken", Kind: "ConfigMap", Name: "{{ .spec.missing }}"}),
	}}
	cr := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "namespace": "ns"}, "spec": map[string]any{}}}

	_, held := w.read(context.Background(), input{key: "ns/a", cr: cr})
	if held == nil || held.reason != reasonRelatedInvalid {
		t.Fatalf("held = %+v, want %s", held, reasonRelatedInvalid)
	}
	if got := w.index.Targets("ns/a"); len(got) != 1 || got[0].Ref.Name != "shared" {
		t.Errorf("indexed %v, want the reference that resolved (shared)", got)
	}

	rel, held := w.read(context.Background(), input{key: "ns/a", cr: cr, deleting: true})
	if held != nil {
		t.Fatalf("a delete held by an unresolved reference: %+v", held)
	}
	out := rel.objects
	if b, ok := out["broken"]; !ok || len(b) != 0 || len(out["shared"]) != 1 {
		t.Errorf("related of the delete = %v, want broken as [] and shared read", out)
	}
}

// A watched related object is read at the version its watch holds (served from the
// apiserver's watch cache, no older than the change that passed the CR); one the watch has
// not seen is read from quorum.
func TestRelatedGetReadsAtTheWatchedVersion(t *testing.T) {
	var mu sync.Mutex
	rvs := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		rvs[path.Base(r.URL.Path)] = r.URL.Query().Get("resourceVersion")
		mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns","resourceVersion":"42"}}`, path.Base(r.URL.Path))
	}))
	defer srv.Close()
	dyn, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	if err := inf.GetIndexer().Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "seen", Namespace: "ns", ResourceVersion: "42"}}); err != nil {
		t.Fatal(err)
	}
	w := &relatedWatch{deps: relatedDeps{dyn: dyn}, index: related.NewIndex()}
	e := relatedEntry{Entry: &related.Entry{As: "config"}, gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, watched: true, watch: informers.AllNamespaces(inf)}
	for _, name := range []string{"seen", "unseen"} {
		if _, _, err := w.fetch(context.Background(), e, related.Ref{Namespace: "ns", Name: name}, input{key: "ns/a"}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if rvs["seen"] != "42" || rvs["unseen"] != "" {
		t.Errorf("resourceVersion of the reads = %v, want seen at 42 and unseen from quorum (none)", rvs)
	}
}

// A Pod keeps no metadata.generation: its status-only change is told from a spec change by
// a digest of the object without status, and passes nobody whose reference lacks
// watchStatus; a spec change passes the CR.
func TestRelatedStatusOnlyChangeOfAKindWithoutGeneration(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "ns", "resourceVersion": "1"},
		"spec":     map[string]any{"image": "a"}, "status": map[string]any{"phase": "Pending"}}}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), pod.DeepCopy())
	m := NewMetrics()
	q := newLaneQueue("app", time.Millisecond, time.Second, m)
	defer q.ShutDown()
	c := &controller{e: &Engine{gate: allMine{}, dyn: dyn, opts: Options{Metrics: m}}, crd: &katalog.CRD{Name: "app"}, ledger: newLedger(), lanes: q, queue: q}
	w := &relatedWatch{deps: c.relatedDeps(), index: related.NewIndex(), checks: newStatusChecks()}
	w.index.Set("ns/a", []related.Target{{Resource: pods.GroupResource(), Ref: related.Ref{Namespace: "ns", Name: "p"}}})
	w.digests.remember(pods, pod.Object) // what the pass read
	// changed hands the read to the checks' workers (the informer's goroutine must not wait
	// on it): one check taken by hand makes each change's outcome deterministic.
	changed := func(old, u *metav1.PartialObjectMetadata) {
		w.changed(pods, old, u)
		ck, ok := w.checks.take()
		if !ok {
			t.Fatal("the change queued no check")
		}
		w.finishCheck(context.Background(), ck)
		w.checks.done(ck.key)
	}
	edit := func(rv string, f func(*unstructured.Unstructured)) {
		cur, err := dyn.Resource(pods).Namespace("ns").Get(context.Background(), "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f(cur)
		cur.SetResourceVersion(rv)
		if _, err := dyn.Resource(pods).Namespace("ns").Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	meta := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: rv}}
	}
	edit("2", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"phase": "Running"} })
	changed(meta("1"), meta("2"))
	if q.Len() != 0 {
		t.Fatalf("a Pod's status-only change queued %d keys, want none", q.Len())
	}
	edit("3", func(u *unstructured.Unstructured) { u.Object["spec"] = map[string]any{"image": "b"} })
	changed(meta("2"), meta("3"))
	if q.Len() != 1 {
		t.Errorf("a Pod's spec change queued %d keys, want the CR that read it", q.Len())
	}
}

// M5: a related watch that cannot list is named in waitSynced's error, like a child type.
func TestWaitSyncedNamesAnUnsyncedRelatedWatch(t *testing.T) {
	own := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	rel := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	c := &controller{crd: &katalog.CRD{Name: "app"}, gvr: schema.GroupVersionResource{Group: "t.ork.test", Version: "v1", Resource: "apps"},
		informer: informers.AllNamespaces(own), related: &relatedWatch{informers: []relatedInformer{{gvr: cms, inf: informers.AllNamespaces(rel)}}}}
	err := c.waitSynced(context.Background(), 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "related configmaps") {
		t.Fatalf("waitSynced = %v, want an error naming related configmaps", err)
	}
}

// hourIntervalController is a controller with lanes and a ChildMinInterval of an hour:
// anything the interval delays is not ready within a test.
func hourIntervalController(t *testing.T) (*controller, *laneQueue) {
	m := NewMetrics()
	q := newLaneQueue("app", time.Millisecond, time.Second, m)
	t.Cleanup(q.ShutDown)
	return &controller{e: &Engine{gate: allMine{}, opts: Options{Metrics: m, ChildMinInterval: time.Hour}}, crd: &katalog.CRD{Name: "app"}, ledger: newLedger(), lanes: q, queue: q}, q
}

// A related change seen while the CR's pass runs waits a whole ChildMinInterval: measured
// from the running pass, not the one before it (CI saw two passes 11ms apart at a 500ms
// interval when the change raced a pass the previous change had delayed).
func TestARelatedChangeDuringAPassWaitsTheInterval(t *testing.T) {
	c, q := hourIntervalController(t)
	c.ledger.note("ns/a", TriggerCreate)
	if _, _, ok := c.ledger.begin("ns/a", time.Now()); !ok {
		t.Fatal("begin found nothing pending")
	}
	c.ledger.end("ns/a", time.Now().Add(-2*time.Hour), false) // a pass long ago
	c.ledger.note("ns/a", TriggerRelated)
	if _, _, ok := c.ledger.begin("ns/a", time.Now()); !ok {
		t.Fatal("begin found nothing pending")
	}
	c.relatedChanged("ns/a", true) // during the pass
	if q.Len() != 0 {
		t.Errorf("a change during a pass queued the key at once (%d ready), want it delayed a whole interval", q.Len())
	}
}

// A key handed out by the queue with only a related or child change pending, within
// ChildMinInterval of its last pass, waits out the interval without beginning a pass (the
// queue re-runs a key at once when a change marked it while it was being handed out); a
// change of the CR itself is never held.
func TestAKeyTooSoonAfterItsPassWaits(t *testing.T) {
	c, q := hourIntervalController(t)
	c.ledger.note("ns/a", TriggerCreate)
	c.ledger.begin("ns/a", time.Now())
	c.ledger.end("ns/a", time.Now(), false)
	c.ledger.note("ns/a", TriggerRelated)
	c.handle(context.Background(), "ns/a")
	if q.Len() != 0 {
		t.Errorf("%d keys ready, want the key delayed", q.Len())
	}
	if tr, _, ok := c.ledger.begin("ns/a", time.Now()); !ok || tr != TriggerRelated {
		t.Errorf("pending after the held hand-out = %q, %v; want related still pending", tr, ok)
	}
	c.ledger.end("ns/a", time.Now(), false)
	c.ledger.note("ns/a", TriggerUpdate)
	if wait := c.ledger.tooSoon("ns/a", time.Now(), time.Hour); wait != 0 {
		t.Errorf("an update of the CR waits %s, want no wait", wait)
	}
	// A requeue the reconciler asked for keeps its time when a child changes beside it
	// (the child's trigger outranks it, but the pass is owed anyway).
	c.ledger.begin("ns/a", time.Now())
	c.ledger.end("ns/a", time.Now(), false)
	c.ledger.note("ns/a", TriggerRequeue)
	c.ledger.note("ns/a", TriggerChild)
	if wait := c.ledger.tooSoon("ns/a", time.Now(), time.Hour); wait != 0 {
		t.Errorf("a requeue with a child change beside it waits %s, want no wait", wait)
	}
}
