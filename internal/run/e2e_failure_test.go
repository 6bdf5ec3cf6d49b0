package run_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/runtest"
)

// 5. requeue with requeueAfter: a second call, with trigger requeue, after the delay.
func TestRequeueAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var n atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		if n.Add(1) == 1 {
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "1s"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	first := ep.Next(t)
	second := ep.NextMatching(t, "with trigger requeue", func(c call) bool { return c.Trigger == "requeue" })
	if gap := second.Start.Sub(first.Start); gap < time.Second {
		t.Errorf("requeued call came %v after the first, want at least requeueAfter (1s)", gap)
	}
	f.WaitReady("web", "True")
}

// 6. An error result retries with growing intervals, and its status is never written.
func TestErrorResultBacksOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "error", "error": "database unreachable",
			"status": map[string]any{"phase": "Broken"}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	calls := []call{ep.Next(t), ep.Next(t), ep.Next(t), ep.Next(t)}
	// Base 100ms: the n-th retry waits at least 100ms * 2^(n-1); lower bounds only.
	for i := 1; i < len(calls); i++ {
		gap := calls[i].Start.Sub(calls[i-1].Start)
		floor := 100 * time.Millisecond << (i - 1)
		if gap < floor {
			t.Errorf("retry %d came after %v, want at least %v (exponential backoff)", i, gap, floor)
		}
		if a, _, _ := unstructured.NestedFloat64(calls[i].Body, "prepared", "attempt"); int(a) != i+1 {
			t.Errorf("retry %d has prepared.attempt %v, want %d", i, a, i+1)
		}
	}
	got := f.WaitReady("web", "False")
	if msg, _ := runtest.ReadyCondition(got)["message"].(string); !strings.Contains(msg, "database unreachable") {
		t.Errorf("Ready message %q, want the reconciler's error text", msg)
	}
	if phase, found, _ := unstructured.NestedString(got.Object, "status", "phase"); found {
		t.Errorf("status.phase = %q: the status of an error result must be dropped", phase)
	}
	f.WaitEvent("web", corev1.EventTypeWarning, "ReconcileError")
}

// 7. A slow endpoint, a 500, garbage JSON and a 20 MiB body are each a recorded failure;
// ork keeps serving /healthz and reconciling the other CRs.
func TestBadEndpointsAreFailuresNotCrashes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	huge := bytes.Repeat([]byte(" "), 20<<20)
	ep := runtest.NewEndpoint(t, func(c call) response {
		switch c.CRName() {
		case "slow":
			<-c.Ctx.Done() // answer only after ork gave up
			return response{Status: http.StatusOK, Body: []byte(`{"result":"ok"}`)}
		case "fivehundred":
			return response{Status: http.StatusInternalServerError, Body: []byte("boom")}
		case "garbage":
			return response{Status: http.StatusOK, Body: []byte("{not json")}
		case "huge":
			return response{Status: http.StatusOK, Body: append([]byte(`{"result":"ok","error":"`), huge...)}
		}
		return runtest.OKWithChildren(c)
	})
	eng := f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "1s"}), nil)
	wantReason := map[string]string{
		"slow": "RemoteTimeout", "fivehundred": "RemoteHTTPError", "garbage": "InvalidRemoteResponse", "huge": "RemoteResponseTooLarge",
	}
	for name := range wantReason {
		f.CreateCR(name, map[string]any{})
	}
	f.CreateCR("good", map[string]any{})

	f.WaitReady("good", "True")
	for name, reason := range wantReason {
		// Each retry rewrites the message. Waiting for the expected one, not checking the
		// first False, keeps one slow attempt on a busy machine (a 1s timeout covers the
		// secret read too) from failing the test.
		f.Eventually(name+": Ready=False with reason "+reason, func() (bool, error) {
			got, err := f.Get(f.GVR, name)
			if err != nil {
				return false, err
			}
			c := runtest.ReadyCondition(got)
			if msg, _ := c["message"].(string); c == nil || c["status"] != "False" || !strings.HasPrefix(msg, reason) {
				return false, fmt.Errorf("Ready condition %v", c) // shown if it never comes
			}
			return true, nil
		})
		f.WaitEvent(name, corev1.EventTypeWarning, "ReconcileError")
	}
	if n := testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "error", "stable")); n < 4 {
		t.Errorf("ork_reconcile_total{result=error} = %v, want at least 4", n)
	}
	for _, code := range []string{"timeout", "500", "200"} {
		if n := runtest.HistogramCount(t, f.Metrics, "ork_remote_request_duration_seconds", "code", code); n == 0 {
			t.Errorf("no ork_remote_request_duration_seconds sample for code %s", code)
		}
	}
	res, err := http.Get(fmt.Sprintf("http://%s/healthz", eng.HealthAddr()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %d while endpoints misbehave, want 200", res.StatusCode)
	}
	// The same failures as Prometheus scrapes them.
	res, err = http.Get(fmt.Sprintf("http://%s/metrics", eng.HealthAddr()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`ork_reconcile_total{crd="app",result="error",side="stable"}`,
		`ork_reconcile_total{crd="app",result="success",side="stable"}`,
		`ork_remote_request_duration_seconds_count{code="timeout",crd="app"}`,
		`ork_apply_total{crd="app",kind="Deployment",result="success"}`,
		`ork_workqueue_retries_total{name="app"}`,
		`ork_workqueue_depth{name="app"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

// 8. 429 with Retry-After: 2 is retried no sooner than 2 s later.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var n atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		if n.Add(1) == 1 {
			return response{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "2"}, Body: []byte("slow down")}
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	first, second := ep.Next(t), ep.Next(t)
	if gap := second.Start.Sub(first.Start); gap < 2*time.Second {
		t.Errorf("retry came %v after the 429, want at least Retry-After (2s); backoff base is only 100ms", gap)
	}
	f.WaitReady("web", "True")
}

// A CR that another controller's finalizer holds while it is deleted is still there to
// look at: a failed delete call is reported on it (Ready=False, Warning Event) like any other.
func TestFailedDeleteIsReportedWhileAFinalizerHoldsTheCR(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if deleting, _, _ := unstructured.NestedBool(c.Body, "prepared", "deleting"); deleting {
			return response{Status: http.StatusInternalServerError, Body: []byte("cannot tear down")}
		}
		return runtest.OKWithChildren(c)
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	hold := `{"metadata":{"finalizers":["example.com/hold"]}}`
	if _, err := f.Dyn.Resource(f.GVR).Namespace(f.NS).Patch(t.Context(), "web", types.MergePatchType, []byte(hold), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // let the namespace go
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = f.Dyn.Resource(f.GVR).Namespace(f.NS).Patch(ctx, "web", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := f.Dyn.Resource(f.GVR).Namespace(f.NS).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("Ready=False with RemoteHTTPError on the CR being deleted", func() (bool, error) {
		c := runtest.ReadyCondition(f.GetCR("web"))
		if msg, _ := c["message"].(string); c == nil || c["status"] != "False" || !strings.HasPrefix(msg, "RemoteHTTPError") {
			return false, fmt.Errorf("Ready condition %v", c)
		}
		return true, nil
	})
	f.WaitEvent("web", corev1.EventTypeWarning, "ReconcileError")
}
