package shardrun_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/testkit"
)

// A name deleted and created again (kubectl replace --force, a GitOps Replace=true) is called
// in order across replicas: the old incarnation's delete is answered before the first call
// for the new one, and no two calls for one name overlap, whichever replicas hold the two
// uids' buckets. The reconciler takes a while over deletes, so that an unordered create
// would arrive during one.
func TestReplacedNamesAreCalledInOrderAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const deleteTime = time.Second // inside the 5s timeout
	f.ep.SetRespond(func(c reconcilertest.Call) reconcilertest.Response {
		if deleting(c) {
			select {
			case <-time.After(deleteTime):
			case <-c.Ctx.Done():
			}
			return reconcilertest.JSON(map[string]any{"result": "ok"})
		}
		obj, _ := c.Body["object"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		return reconcilertest.JSON(map[string]any{"result": "ok", "status": map[string]any{"seen": spec["v"]}})
	})
	const b, n = 4, 20
	f.sharded("a", b, "--endpoint", f.via("a"))
	f.sharded("c", b, "--endpoint", f.via("c"))
	f.settled(2*leaseDuration+slack, b, "a", "c")
	want := map[string]string{}
	old := map[string]*unstructured.Unstructured{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()] = "1"
		old[cr.GetName()] = cr
	}
	f.waitConverged("every widget reconciled", slack, want)

	// Replace every widget at once: delete, then create the name again as soon as the
	// apiserver takes it.
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for name := range old {
		want[name] = "2"
		wg.Go(func() {
			if err := f.dyn.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
				errs <- err
				return
			}
			w := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": "2"}}}
			w.SetAPIVersion("testenv.orkspace.io/v1")
			w.SetKind("Widget")
			w.SetName(name)
			err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, slack, true, func(ctx context.Context) (bool, error) {
				_, err := f.dyn.Create(ctx, w, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					return false, nil // the old one still holds the name
				}
				return err == nil, err
			})
			if err != nil {
				errs <- fmt.Errorf("create %s again: %w", name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.waitConverged("every new widget reconciled", slack, want)
	testkit.Eventually(t, "every old widget's delete answered", 100*time.Millisecond, slack, func(context.Context) (bool, error) {
		answered := 0
		for _, c := range f.ep.Calls() {
			if deleting(c) && !c.End.IsZero() {
				answered++
			}
		}
		return answered >= n, nil
	})

	for name, o := range old {
		var deleteEnd time.Time
		var firstNew *reconcilertest.Call
		for _, c := range f.ep.Calls() {
			if c.Key != f.ns+"/"+name {
				continue
			}
			switch uid := uidOf(c); {
			case uid == o.GetUID() && deleting(c) && deleteEnd.IsZero():
				deleteEnd = c.End
			case uid != o.GetUID() && firstNew == nil:
				firstNew = &c
			}
		}
		switch {
		case deleteEnd.IsZero():
			t.Errorf("%s: no delete call for the old incarnation", name)
		case firstNew == nil:
			t.Errorf("%s: no call for the new incarnation", name)
		case firstNew.Start.Before(deleteEnd):
			t.Errorf("%s: the new incarnation's first call (%s, by %s) started before the old one's delete was answered",
				name, firstNew.Trigger, firstNew.Header.Get(replicaHeader))
		}
	}
	for _, o := range f.ep.Overlaps() {
		t.Errorf("calls for %s overlapped: %s by %s and %s by %s", o.Key, o.First.Trigger, o.First.Header.Get(replicaHeader),
			o.Second.Trigger, o.Second.Header.Get(replicaHeader))
	}
}

// deleting reports whether c is a delete's call (prepared.deleting): trigger delete for an
// object gone, update for one its finalizer holds.
func deleting(c reconcilertest.Call) bool {
	p, _ := c.Body["prepared"].(map[string]any)
	d, _ := p["deleting"].(bool)
	return d
}
