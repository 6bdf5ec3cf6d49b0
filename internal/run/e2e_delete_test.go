package run_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

func deleting(c call) bool {
	d, _, _ := unstructured.NestedBool(c.body, "prepared", "deleting")
	return d
}

// 10.8 The common delete with clean-up: another finalizer holds the CR, the reconciler's
// pass on the terminating CR lifts it, and the real delete arrives while that pass is still
// running. The delete is still delivered (the pass may not wipe a tombstone it did not use).
func TestDeleteArrivingDuringATerminatingPassIsDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(c call) response {
		if deleting(c) && c.trigger() != "delete" {
			// The reconciler's clean-up is done: it lifts the finalizer, and answers only once
			// ork has seen the delete that follows (counted before it is queued).
			seen := f.triggers("delete")
			_, err := f.crs().Patch(c.ctx, c.crName(), types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil {
				t.Errorf("lift finalizer: %v", err)
			}
			_ = wait.PollUntilContextTimeout(c.ctx, 10*time.Millisecond, 30*time.Second, true,
				func(context.Context) (bool, error) { return f.triggers("delete") > seen, nil })
		}
		return jsonResponse(map[string]any{"result": "ok"})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	f.patchSpec("web", `{"metadata":{"finalizers":["example.com/cleanup"]}}`)
	if err := f.crs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.nextMatching(t, "for the terminating CR", func(c call) bool { return deleting(c) && c.trigger() != "delete" })
	ep.nextMatching(t, "with trigger delete", func(c call) bool { return c.trigger() == "delete" && deleting(c) })
}

// 10.8 A requeue answered to a delete is honoured: asynchronous clean-up is asked again
// until it says ok.
func TestRequeueAnsweredToADeleteIsKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var asked atomic.Int32
	ep := newEndpoint(t, func(c call) response {
		if deleting(c) && asked.Add(1) == 1 {
			return jsonResponse(map[string]any{"result": "requeue", "requeueAfter": "200ms"})
		}
		return jsonResponse(map[string]any{"result": "ok"})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	if err := f.crs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.nextMatching(t, "with trigger delete", func(c call) bool { return c.trigger() == "delete" })
	again := ep.nextMatching(t, "asking the clean-up again", func(c call) bool { return deleting(c) })
	if again.trigger() != "requeue" {
		t.Errorf("second delete call has trigger %q, want requeue", again.trigger())
	}
}

// 10.8 A CR deleted and created again under the same name while its delete is still being
// asked (a requeue answered to it) gets that delete first: the old object's clean-up is not
// dropped for the new object, which is reconciled right after.
func TestRecreatedCRStillGetsItsOldDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var asked atomic.Int32
	ep := newEndpoint(t, func(c call) response {
		if deleting(c) && asked.Add(1) == 1 {
			return jsonResponse(map[string]any{"result": "requeue", "requeueAfter": "300ms"})
		}
		return jsonResponse(map[string]any{"result": "ok"})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	old := f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	if err := f.crs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.nextMatching(t, "with trigger delete", func(c call) bool { return c.trigger() == "delete" })
	fresh := f.createCR("web", map[string]any{})
	uid := func(c call) string {
		s, _, _ := unstructured.NestedString(c.body, "object", "metadata", "uid")
		return s
	}
	next := ep.nextMatching(t, "after the re-create", func(c call) bool { return uid(c) == string(old.GetUID()) || uid(c) == string(fresh.GetUID()) })
	if uid(next) != string(old.GetUID()) || !deleting(next) {
		t.Fatalf("after the re-create the call was for %s (deleting %v), want the old object's delete asked again first", uid(next), deleting(next))
	}
	ep.nextMatching(t, "for the new object", func(c call) bool { return uid(c) == string(fresh.GetUID()) && !deleting(c) })
}
