package sharde2e_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// The engine's CR cache: a dynamic informer whose list and watch carry the held buckets'
// shard selector caches exactly the custom resources of those buckets.
func TestShardedInformerCachesOnlyTheHeldBucketsCRs(t *testing.T) {
	e := env.Require(t)
	e.InstallCRD(t, "../../testenv/testdata/widgets.crd.yaml")
	ns := e.Namespace(t)
	gvr := schema.GroupVersionResource{Group: "testenv.orkspace.io", Version: "v1", Resource: "widgets"}
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	widgets := dyn.Resource(gvr).Namespace(ns)
	create := func(i int) *unstructured.Unstructured {
		w := &unstructured.Unstructured{}
		w.SetAPIVersion("testenv.orkspace.io/v1")
		w.SetKind("Widget")
		w.SetName(fmt.Sprintf("w-%02d", i))
		got, err := widgets.Create(t.Context(), w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	const b = 8
	held := []int{1, 2, 6}
	sel := shard.Selector(held, b)
	var want []string
	add := func(w *unstructured.Unstructured) {
		if slices.Contains(held, shard.BucketOf(w.GetUID(), b)) {
			want = append(want, w.GetName())
		}
	}
	for i := range 30 { // before the informer starts: its list
		add(create(i))
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, gvr, ns, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.ShardSelector = sel.String() })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go inf.Informer().RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}
	for i := 30; i < 60; i++ { // after: its watch
		add(create(i))
	}
	slices.Sort(want)
	if len(want) == 0 || len(want) == 60 {
		t.Fatalf("the held buckets keep %d of 60 widgets: the sample does not tell filtering apart", len(want))
	}
	cached := func() []string {
		var names []string
		for _, k := range inf.Informer().GetStore().ListKeys() {
			_, name, _ := cache.SplitMetaNamespaceKey(k)
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	// The watch delivers within milliseconds; the bound only catches a watch that stalls.
	testkit.Eventually(t, "the cache holds the held buckets' widgets", 50*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		if got := cached(); !slices.Equal(got, want) {
			if len(got) > len(want) {
				return false, testkit.Permanent(fmt.Errorf("cached %d widgets %v, want only %d %v", len(got), got, len(want), want))
			}
			return false, fmt.Errorf("cached %v, want %v", got, want)
		}
		return true, nil
	})
}
