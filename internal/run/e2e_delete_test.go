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

	"github.com/orkspace/ork/internal/run/runtest"
)

// 10.8 The common delete with clean-up: another finalizer holds the CR, the reconciler's
// pass on the terminating CR lifts it, and the real delete arrives while that pass is still
// running. The delete is still delivered (the pass may not wipe a tombstone it did not use).
func TestDeleteArrivingDuringATerminatingPassIsDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if runtest.Deleting(c) && c.Trigger != "delete" {
			// The reconciler's clean-up is done: it lifts the finalizer, and answers only once
			// ork has seen the delete that follows (counted before it is queued).
			seen := f.triggers("delete")
			_, err := f.CRs().Patch(c.Ctx, c.CRName(), types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil {
				t.Errorf("lift finalizer: %v", err)
			}
			_ = wait.PollUntilContextTimeout(c.Ctx, 10*time.Millisecond, 30*time.Second, true,
				func(context.Context) (bool, error) { return f.triggers("delete") > seen, nil })
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.PatchSpec("web", `{"metadata":{"finalizers":["example.com/cleanup"]}}`)
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "for the terminating CR", func(c call) bool { return runtest.Deleting(c) && c.Trigger != "delete" })
	ep.NextMatching(t, "with trigger delete", func(c call) bool { return c.Trigger == "delete" && runtest.Deleting(c) })
}

// 10.8 A requeue answered to a delete is honoured: asynchronous clean-up is asked again
// until it says ok.
func TestRequeueAnsweredToADeleteIsKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var asked atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		if runtest.Deleting(c) && asked.Add(1) == 1 {
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "200ms"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "with trigger delete", func(c call) bool { return c.Trigger == "delete" })
	again := ep.NextMatching(t, "asking the clean-up again", func(c call) bool { return runtest.Deleting(c) })
	if again.Trigger != "requeue" {
		t.Errorf("second delete call has trigger %q, want requeue", again.Trigger)
	}
}

// 10.8 A CR deleted and created again under the same name while its delete is still being
// asked (a requeue answered to it) gets that delete first: the old object's clean-up is not
// dropped for the new object, which is reconciled right after.
func TestRecreatedCRStillGetsItsOldDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var asked atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		if runtest.Deleting(c) && asked.Add(1) == 1 {
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "300ms"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	old := f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "with trigger delete", func(c call) bool { return c.Trigger == "delete" })
	fresh := f.CreateCR("web", map[string]any{})
	uid := func(c call) string {
		s, _, _ := unstructured.NestedString(c.Body, "object", "metadata", "uid")
		return s
	}
	next := ep.NextMatching(t, "after the re-create", func(c call) bool { return uid(c) == string(old.GetUID()) || uid(c) == string(fresh.GetUID()) })
	if uid(next) != string(old.GetUID()) || !runtest.Deleting(next) {
		t.Fatalf("after the re-create the call was for %s (deleting %v), want the old object's delete asked again first", uid(next), runtest.Deleting(next))
	}
	ep.NextMatching(t, "for the new object", func(c call) bool { return uid(c) == string(fresh.GetUID()) && !runtest.Deleting(c) })
}
