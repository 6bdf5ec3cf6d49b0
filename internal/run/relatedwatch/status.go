package relatedwatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/run/kobj"
)

// specDigests tell a status-only change of a related object whose kind keeps no
// metadata.generation (Pods, Nodes, Namespaces, PVCs) from a real one: the metadata watch
// sees only a new resourceVersion either way. Each is a digest of the object without
// status, versions and managedFields, taken when a pass read it and again at each change.
type specDigests struct {
	mu sync.Mutex
	m  map[string]string
}

// digestRead is how long a change's read of the object may take before it counts as a change.
const digestRead = 10 * time.Second

func digestKey(gr schema.GroupResource, namespace, name string) string {
	return gr.String() + "/" + namespace + "/" + name
}

// digestable: kinds without a status (ConfigMaps, Secrets) change only for real.
func digestable(gvr schema.GroupVersionResource) bool {
	return gvr.Group != "" || (gvr.Resource != "configmaps" && gvr.Resource != "secrets")
}

// specDigest hashes obj without status, resourceVersion, generation and managedFields.
func specDigest(obj map[string]any) string {
	o := maps.Clone(obj)
	delete(o, "status")
	if md, ok := o["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "resourceVersion")
		delete(md, "managedFields")
		delete(md, "generation")
		o["metadata"] = md
	}
	b, _ := json.Marshal(o) // map keys are sorted: one object, one digest
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// remember records the digest of an object a pass read.
func (s *specDigests) remember(gvr schema.GroupVersionResource, obj map[string]any) {
	if !digestable(gvr) {
		return
	}
	md, _ := obj["metadata"].(map[string]any)
	if g, _ := md["generation"].(int64); g != 0 {
		return // the generation tells already
	}
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[digestKey(gvr.GroupResource(), ns, name)] = specDigest(obj)
}

func (s *specDigests) forget(gr schema.GroupResource, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, digestKey(gr, namespace, name))
}

// statusOnly reports whether the change from old to u of a generation-less object left all
// but its status as it was: its metadata alike, and its digest, read at u's version, the
// one remembered. The new digest is remembered; a failed read counts as a change.
func (w *Watch) statusOnly(ctx context.Context, gvr schema.GroupVersionResource, old, u metav1.Object) bool {
	if !needsDigest(gvr, old, u) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, digestRead)
	defer cancel()
	full, err := w.deps.Dyn.Resource(gvr).Namespace(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{ResourceVersion: u.GetResourceVersion()})
	if err != nil {
		return false
	}
	d := specDigest(full.Object)
	key := digestKey(gvr.GroupResource(), u.GetNamespace(), u.GetName())
	w.digests.mu.Lock()
	defer w.digests.mu.Unlock()
	if w.digests.m == nil {
		w.digests.m = map[string]string{}
	}
	prev, had := w.digests.m[key]
	w.digests.m[key] = d
	return had && prev == d
}

// needsDigest: only a read of the object can tell whether more than its status changed (a
// kind without metadata.generation whose metadata stayed as it was).
func needsDigest(gvr schema.GroupVersionResource, old, u metav1.Object) bool {
	return digestable(gvr) && u.GetGeneration() == 0 && sameMeta(old, u)
}

func sameMeta(a, b metav1.Object) bool {
	return maps.Equal(a.GetLabels(), b.GetLabels()) && maps.Equal(a.GetAnnotations(), b.GetAnnotations()) &&
		slices.Equal(a.GetFinalizers(), b.GetFinalizers()) && kobj.EqualOwners(a.GetOwnerReferences(), b.GetOwnerReferences()) &&
		(a.GetDeletionTimestamp() == nil) == (b.GetDeletionTimestamp() == nil)
}
