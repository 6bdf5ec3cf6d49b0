package declarative

import (
	"reflect"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/resources"
)

// BenchmarkDesired compares one reconciler reused across passes (what ork run does) with a
// fresh one per pass (every template parsed again), in the same run:
//
//	go test ./internal/declarative -run '^$' -bench Desired -benchmem
func BenchmarkDesired(b *testing.B) {
	set, _, err := katalog.Load([]string{"../../examples/website/katalog.yaml"})
	if err != nil {
		b.Fatal(err)
	}
	c := set.CRD("website")
	cr := map[string]any{
		"metadata": map[string]any{"name": "my-site", "namespace": "default"},
		"spec":     map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080)},
	}
	b.Run("parse-every-pass", func(b *testing.B) {
		for b.Loop() {
			if _, err := New(c).Desired(cr, resources.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reused-reconciler", func(b *testing.B) {
		r := New(c)
		for b.Loop() {
			if _, err := r.Desired(cr, resources.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A reused reconciler gives the same plan as a fresh one (the cache changes cost, not output).
func TestReusedReconcilerMatchesFresh(t *testing.T) {
	set, _, err := katalog.Load([]string{"../../examples/website/katalog.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	c := set.CRD("website")
	r := New(c)
	for _, replicas := range []int64{2, 5} {
		cr := map[string]any{
			"metadata": map[string]any{"name": "my-site", "namespace": "default"},
			"spec":     map[string]any{"image": "nginx:1.27", "replicas": replicas, "port": int64(8080)},
		}
		reused, err := r.Desired(cr, resources.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := Desired(c, cr, resources.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(reused, fresh) {
			t.Errorf("replicas %d: reused reconciler plan differs from a fresh one", replicas)
		}
	}
}
