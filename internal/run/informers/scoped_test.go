package informers

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func informerWith(objs ...*metav1.PartialObjectMetadata) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	for _, o := range objs {
		if err := inf.GetStore().Add(o); err != nil {
			panic(err)
		}
	}
	return inf
}

func obj(ns, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// Per watched namespace, the caches read as one: a key finds its namespace's cache, a key
// of a namespace ork does not watch is never cached, List and ListKeys cover every cache.
func TestScopedReadsPerNamespaceCachesAsOne(t *testing.T) {
	s := PerNamespace([]string{"a", "b"}, func(ns string) cache.SharedIndexInformer { return informerWith(obj(ns, "x")) })
	for _, tc := range []struct {
		key   string
		found bool
	}{{"a/x", true}, {"b/x", true}, {"c/x", false}, {"a/y", false}} {
		if _, found, err := s.GetIndexer().GetByKey(tc.key); err != nil || found != tc.found {
			t.Errorf("GetByKey(%s) = %v, %v; want %v", tc.key, found, err, tc.found)
		}
	}
	keys := s.GetIndexer().ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a/x", "b/x"}) || len(s.GetIndexer().List()) != 2 {
		t.Errorf("ListKeys = %v, List has %d; want both namespaces' objects", keys, len(s.GetIndexer().List()))
	}
	if rv := s.LastSyncRV("c"); rv != "" {
		t.Errorf("LastSyncRV of an unwatched namespace = %q, want none", rv)
	}
	all := AllNamespaces(informerWith(obj("a", "x"), obj("c", "x")))
	if _, found, _ := all.GetIndexer().GetByKey("c/x"); !found || all.Namespaces() != nil {
		t.Errorf("one informer over every namespace: c/x found %v, namespaces %v", found, all.Namespaces())
	}
}
