package relatedwatch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/run/informers"
)

// A related object's change passes the CRs that read it: in the fast lane while it concerns
// at most FanOut of them, in the slow lane past that (one shared ConfigMap must not
// crowd out the real changes of other CRs); a re-list of the same version passes nobody.
func TestRelatedChangeFanOutPicksTheLane(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		crs        int
		fast, slow float64
	}{{1, 1, 0}, {FanOut, FanOut, 0}, {FanOut + 1, 0, FanOut + 1}} {
		t.Run(fmt.Sprint(tc.crs), func(t *testing.T) {
			var fast, slow float64
			w := &Watch{deps: Deps{Changed: func(_ string, f bool) {
				if f {
					fast++
				} else {
					slow++
				}
			}}, index: related.NewIndex(), entries: []entry{{Entry: &related.Entry{As: "config"}, gvr: cms, watched: true}}}
			for i := range tc.crs {
				w.index.Set(fmt.Sprintf("ns/cr-%03d", i), []related.Target{{Resource: cms.GroupResource(), Ref: related.Ref{Namespace: "ns", Name: "shared"}}})
			}
			w.index.Set("ns/unrelated", []related.Target{{Resource: cms.GroupResource(), Ref: related.Ref{Namespace: "ns", Name: "other"}}})
			obj := func(rv string) *metav1.PartialObjectMetadata {
				return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shared", ResourceVersion: rv}}
			}
			w.changed(cms, obj("1"), obj("1")) // a re-list: no change
			if int(fast+slow) != 0 {
				t.Fatalf("a re-list of the same version queued %d keys", int(fast+slow))
			}
			w.changed(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, obj("1"), obj("2"))
			if int(fast+slow) != 0 {
				t.Fatalf("a Secret of the name the CRs' ConfigMap has queued %d keys", int(fast+slow))
			}
			w.changed(cms, obj("1"), obj("2"))
			if int(fast+slow) != tc.crs {
				t.Errorf("%d keys queued, want the %d CRs that read the object", int(fast+slow), tc.crs)
			}
			if fast != tc.fast || slow != tc.slow {
				t.Errorf("fast %v, slow %v; want %v and %v", fast, slow, tc.fast, tc.slow)
			}
		})
	}
}

// A reference that does not resolve holds a pass, but the references that did are indexed
// (a change of one passes the CR again); a delete is not held by it: that entry goes as [].
func TestAnUnresolvedReferenceKeepsTheOthersAndHoldsNoDelete(t *testing.T) {
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	shared := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "shared", "namespace": "ns"}}}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), shared)
	newEntry := func(r katalog.Related) entry {
		e, err := related.Compile("payload.related", r)
		if err != nil {
			t.Fatal(err)
		}
		e.Namespaced = true
		return entry{Entry: e, gvr: cmGVR, watched: true}
	}
	w := &Watch{deps: Deps{Dyn: dyn}, index: related.NewIndex(), entries: []entry{
		newEntry(katalog.Related{As: "shared", Kind: "ConfigMap", Name: "shared"}),
		newEntry(katalog.Related{As: "broken", Kind: "ConfigMap", Name: "{{ .spec.missing }}"}),
	}}
	cr := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "namespace": "ns"}, "spec": map[string]any{}}}

	_, held := w.Read(context.Background(), "ns/a", cr, false, false)
	if held == nil || held.Reason != ReasonInvalid {
		t.Fatalf("held = %+v, want %s", held, ReasonInvalid)
	}
	if got := w.index.Targets("ns/a"); len(got) != 1 || got[0].Ref.Name != "shared" {
		t.Errorf("indexed %v, want the reference that resolved (shared)", got)
	}

	rel, held := w.Read(context.Background(), "ns/a", cr, false, true)
	if held != nil {
		t.Fatalf("a delete held by an unresolved reference: %+v", held)
	}
	out := rel.Objects
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
	w := &Watch{deps: Deps{Dyn: dyn}, index: related.NewIndex()}
	e := entry{Entry: &related.Entry{As: "config"}, gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, watched: true, watch: informers.AllNamespaces(inf)}
	for _, name := range []string{"seen", "unseen"} {
		if _, _, err := w.fetch(context.Background(), e, related.Ref{Namespace: "ns", Name: name}, nil, false); err != nil {
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
	var queued int
	w := &Watch{deps: Deps{Dyn: dyn, Changed: func(string, bool) { queued++ }}, index: related.NewIndex(), checks: newStatusChecks()}
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
	if queued != 0 {
		t.Fatalf("a Pod's status-only change queued %d keys, want none", queued)
	}
	edit("3", func(u *unstructured.Unstructured) { u.Object["spec"] = map[string]any{"image": "b"} })
	changed(meta("2"), meta("3"))
	if queued != 1 {
		t.Errorf("a Pod's spec change queued %d keys, want the CR that read it", queued)
	}
}

// A related watch that cannot list is named, for the controller's waitSynced error.
func TestUnsyncedNamesAnUnsyncedRelatedWatch(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	rel := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	w := &Watch{informers: []watchInformer{{gvr: cms, inf: informers.AllNamespaces(rel)}}}
	if got := w.Unsynced(); len(got) != 1 || !strings.Contains(got[0], "related configmaps") || w.HasSynced() {
		t.Fatalf("Unsynced = %v, HasSynced %v; want related configmaps named", got, w.HasSynced())
	}
}

// A pass of a CR this replica no longer owns (its bucket left while the pass ran) records
// no references: ForgetObjects already dropped the bucket's, and none may come back.
func TestRecordKeepsNothingOfACRNotOwned(t *testing.T) {
	owned := map[types.UID]bool{"mine": true}
	w := &Watch{deps: Deps{Owns: func(uid types.UID) bool { return owned[uid] }}, index: related.NewIndex()}
	cms := schema.GroupResource{Resource: "configmaps"}
	target := []related.Target{{Resource: cms, Ref: related.Ref{Namespace: "ns", Name: "shared"}}}
	w.Record("ns/a", "mine", target)
	w.Record("ns/b", "theirs", target)
	got := w.Readers(related.Change{Resource: cms, Namespace: "ns", Name: "shared"})
	if len(got) != 1 || got[0] != "ns/a" {
		t.Fatalf("readers %v, want ns/a alone", got)
	}
}
