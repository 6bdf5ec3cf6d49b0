package sharde2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orkspace/ork/internal/shard"
)

// The apiserver of this package runs with --feature-gates=ShardedListAndWatch=true: a list
// with the shard selector of half the hash space returns exactly the objects the
// client-side matcher keeps.
func TestShardSelectorFiltersListsOnTheServer(t *testing.T) {
	e := env.Require(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	for i := range 40 {
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := cms.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, held := range [][]int{{0}, {1}, {1, 2}, {0, 3}} {
		sel := shard.Selector(held, 4)
		var want []string
		for i := range all.Items {
			ok, err := sel.Matches(&all.Items[i])
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				want = append(want, all.Items[i].Name)
			}
		}
		got, err := cms.List(t.Context(), metav1.ListOptions{ShardSelector: sel.String()})
		if err != nil {
			t.Fatalf("list with shardSelector %q: %v", sel.String(), err)
		}
		names := make([]string, 0, len(got.Items))
		for _, cm := range got.Items {
			names = append(names, cm.Name)
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("buckets %v of 4: the server returned %d of %d ConfigMaps %v, the matcher keeps %d %v",
				held, len(names), len(all.Items), names, len(want), want)
		}
		if len(want) == len(all.Items) || len(want) == 0 {
			t.Errorf("buckets %v of 4 keep %d of %d: the sample does not tell filtering apart", held, len(want), len(all.Items))
		}
	}
}

// A watch with the shard selector delivers only the objects of the held ranges.
func TestShardSelectorFiltersWatchesOnTheServer(t *testing.T) {
	e := env.Require(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	sel := shard.Selector([]int{0}, 2)
	w, err := cms.Watch(t.Context(), metav1.ListOptions{ShardSelector: sel.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Create until at least 20 exist and the last one matches: events come in order, so
	// once the last one's event is in, every earlier event that passed the filter is too.
	var want []string
	for i := 0; ; i++ {
		cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ok, err := sel.Matches(cm)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			want = append(want, cm.Name)
			if i >= 20 {
				break
			}
		}
	}
	var got []string
	timeout := time.After(30 * time.Second) // only catches a watch that never delivers
	for len(got) == 0 || got[len(got)-1] != want[len(want)-1] {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type != watch.Added {
				t.Fatalf("unexpected %s event: %v", ev.Type, ev.Object)
			}
			got = append(got, ev.Object.(*corev1.ConfigMap).Name)
		case <-timeout:
			t.Fatalf("watch delivered %v, waiting for %s", got, want[len(want)-1])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("watch delivered %v, the matcher keeps %v", got, want)
	}
}
