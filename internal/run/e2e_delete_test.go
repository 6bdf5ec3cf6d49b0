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
