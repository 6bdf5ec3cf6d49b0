package run_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// patchStatus merge-patches the CR's status as another controller would.
func (f *fixture) patchStatus(name, patch string) {
	f.T.Helper()
	if _, err := f.CRs().Patch(f.T.Context(), name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "other-controller"}, "status"); err != nil {
		f.T.Fatal(err)
	}
}

func condition(u *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

// 10.1 Status is written from what this pass decided, never from the cache the call started
// with: another writer's condition (with the fields metav1.Condition lacks) and a key it
// changed during the call both survive ork's write.
func TestStatusWriteKeepsWhatOthersWroteDuringTheCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.Trigger == "update" {
			// During the call: another controller adds its condition and moves status.stage on.
			f.patchStatus(c.CRName(), `{"status":{"stage":"new","conditions":[`+
				`{"type":"Ready","status":"True","reason":"ReconcileSucceeded","message":"reconciled","lastTransitionTime":"2026-01-01T00:00:00Z"},`+
				`{"type":"Backup","status":"True","reason":"Done","message":"nightly","lastProbeTime":"2026-01-02T03:04:05Z","lastUpdateTime":"2026-01-02T03:04:05Z","lastTransitionTime":"2026-01-02T03:04:05Z"}]}}`)
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready", "pass": c.Trigger}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	// The CR's events arrive in order: when the update pass reads its cache, stage=old is in it.
	f.patchStatus("web", `{"status":{"stage":"old"}}`)
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	f.Eventually("the update pass written", func() (bool, error) {
		got := f.GetCR("web")
		pass, _, _ := unstructured.NestedString(got.Object, "status", "pass")
		return pass == "update", nil
	})
	got := f.GetCR("web")
	if stage, _, _ := unstructured.NestedString(got.Object, "status", "stage"); stage != "new" {
		t.Errorf("status.stage = %q, want new: ork wrote back a value read before its call", stage)
	}
	backup := condition(got, "Backup")
	if backup == nil {
		t.Fatalf("the other controller's Backup condition was erased: %v", got.Object["status"])
	}
	for _, k := range []string{"lastProbeTime", "lastUpdateTime"} {
		if backup[k] != "2026-01-02T03:04:05Z" {
			t.Errorf("Backup condition %s = %v, want it kept", k, backup[k])
		}
	}
	if og, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration"); og != 2 {
		t.Errorf("observedGeneration = %d, want 2", og)
	}
}

// 10.1 A CR deleted and created again under the same name never gets the status of the
// object it replaced: ork's write carries the uid and resourceVersion it decided on.
func TestRecreatedCRDoesNotInheritTheOldStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	release := make(chan struct{})
	firstUID := make(chan string, 1)
	ep := runtest.NewEndpoint(t, func(c call) response {
		uid, _, _ := unstructured.NestedString(c.Body, "object", "metadata", "uid")
		select {
		case firstUID <- uid: // the first incarnation's call: hold it
			select {
			case <-release:
			case <-c.Ctx.Done():
			}
		default:
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"incarnation": uid}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "1m"}), nil)
	f.CreateCR("web", map[string]any{})
	old := <-firstUID
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := f.CreateCR("web", map[string]any{})
	close(release)
	// One key is reconciled by one worker at a time: when the new incarnation's call
	// arrives, the old one's pass, status write included, is over.
	ep.NextMatching(t, "for the new incarnation", func(c call) bool {
		uid, _, _ := unstructured.NestedString(c.Body, "object", "metadata", "uid")
		return uid == string(fresh.GetUID())
	})
	got := f.GetCR("web")
	if inc, found, _ := unstructured.NestedString(got.Object, "status", "incarnation"); found && inc == old {
		t.Errorf("the new CR got the old incarnation's status (incarnation %s)", inc)
	}
	f.Eventually("the new incarnation's status", func() (bool, error) {
		inc, _, _ := unstructured.NestedString(f.GetCR("web").Object, "status", "incarnation")
		return inc == string(fresh.GetUID()), nil
	})
}

// 10.1 A pass that succeeds after a failed one writes Ready=True even while ork's cache
// still shows the Ready=True of the pass before the failure: "unchanged" is never decided
// from a cache older than ork's own last write.
func TestSuccessAfterFailureIsWrittenEvenWithALaggingCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	faults := newAPIFaults()
	faults.watchPath, faults.watchLag = "/"+f.GVR.Resource, 5*time.Second
	faults.lagAfter.Store(math.MaxUint64)
	var n atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		switch n.Add(1) {
		case 1: // Ready=True; ork's cache has it by the time the requeue comes
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "1s"})
		case 2: // Ready=False, whose echo ork's watch delivers only 5s later
			rv, _ := strconv.ParseUint(f.GetCR(c.CRName()).GetResourceVersion(), 10, 64)
			faults.lagAfter.Store(rv)
			return runtest.JSONResponse(map[string]any{"result": "error", "error": "flaky"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), faults.config(env.Config))
	f.CreateCR("web", map[string]any{})
	for range 3 {
		ep.Next(t)
	}
	f.WaitReady("web", "True")
}

// 10.2 A status the CRD schema rejects fails the reconcile: Ready=False names the field,
// a Warning Event says so, and the key is retried with backoff.
func TestStatusRejectedBySchemaIsAFailure(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, runtest.CRDOptions{StatusProps: "                replicas: {type: integer}\n"})
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"replicas": "many"}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	got := f.WaitReady("web", "False")
	msg, _ := runtest.ReadyCondition(got)["message"].(string)
	if !strings.Contains(msg, "status.replicas") {
		t.Errorf("Ready message %q does not name the rejected field status.replicas", msg)
	}
	ev := f.WaitEvent("web", corev1.EventTypeWarning, "ReconcileError")
	if !strings.Contains(ev.Message, "status.replicas") {
		t.Errorf("Warning Event %q does not name status.replicas", ev.Message)
	}
	ep.NextMatching(t, "retrying the rejected status", func(c call) bool { return c.Trigger == "requeue" })
}

// 10.2 A status write the apiserver fails (500) is a failed reconcile, retried until it
// lands, not a success that leaves the CR without status.
func TestFailedStatusWriteIsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	faults := newAPIFaults()
	faults.failStatusWrites = 1
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), faults.config(env.Config))
	f.CreateCR("web", map[string]any{})
	got := f.WaitReady("web", "True")
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
		t.Errorf("status.phase = %q, want Ready", phase)
	}
	if got := faults.count("PATCH " + fmt.Sprintf("/apis/%s/v1/namespaces/%s/apps/web/status", f.Group, f.NS)); got < 2 {
		t.Errorf("%d status PATCHes, want the failed one and its retry", got)
	}
}

// 10.2 A CRD without the status subresource: ork applies the children, writes no status
// (every write to the object would bump its generation and re-trigger ork forever), and
// says so once per CR with a Warning Event.
func TestCRDWithoutStatusSubresourceGetsNoStatus(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, runtest.CRDOptions{NoStatus: true})
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	ev := f.WaitEvent("web", corev1.EventTypeWarning, "NoStatusSubresource")
	f.Eventually("deployment web", func() (bool, error) {
		_, err := f.Get(runtest.Deployments, "web")
		return err == nil, nil
	})
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	ep.NextMatching(t, "the update", func(c call) bool { return c.Trigger == "update" })
	f.PatchSpec("web", `{"spec":{"replicas":3}}`)
	ep.NextMatching(t, "the second update", func(c call) bool { return c.Trigger == "update" })
	got := f.GetCR("web")
	if st, found := got.Object["status"]; found {
		t.Errorf("status = %v written to a CRD without the status subresource", st)
	}
	if got.GetGeneration() != 3 {
		t.Errorf("generation = %d after two spec changes, want 3 (a status write bumped it)", got.GetGeneration())
	}
	var warnings int32
	for _, e := range f.Events("web") {
		if e.Reason == "NoStatusSubresource" {
			warnings += e.Count
		}
	}
	if warnings != 1 {
		t.Errorf("%d NoStatusSubresource Events (%q), want exactly one per CR", warnings, ev.Message)
	}
}

var _ = run.Options{}
