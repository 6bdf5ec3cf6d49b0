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

	"github.com/orkspace/ork/internal/run"
)

// 5. requeue with requeueAfter: a second call, with trigger requeue, after the delay.
func TestRequeueAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var n atomic.Int32
	ep := newEndpoint(t, func(c call) response {
		if n.Add(1) == 1 {
			return jsonResponse(map[string]any{"result": "requeue", "requeueAfter": "1s"})
		}
		return jsonResponse(map[string]any{"result": "ok"})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	first := ep.next(t)
	second := ep.nextMatching(t, "with trigger requeue", func(c call) bool { return c.trigger() == "requeue" })
	if gap := second.at.Sub(first.at); gap < time.Second {
		t.Errorf("requeued call came %v after the first, want at least requeueAfter (1s)", gap)
	}
	f.waitReady("web", "True")
}

// 6. An error result retries with growing intervals, and its status is never written.
func TestErrorResultBacksOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(c call) response {
		return jsonResponse(map[string]any{"result": "error", "error": "database unreachable",
			"status": map[string]any{"phase": "Broken"}})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	calls := []call{ep.next(t), ep.next(t), ep.next(t), ep.next(t)}
	// Base 100ms: the n-th retry waits at least 100ms * 2^(n-1); lower bounds only.
	for i := 1; i < len(calls); i++ {
		gap := calls[i].at.Sub(calls[i-1].at)
		floor := 100 * time.Millisecond << (i - 1)
		if gap < floor {
			t.Errorf("retry %d came after %v, want at least %v (exponential backoff)", i, gap, floor)
		}
		if a, _, _ := unstructured.NestedFloat64(calls[i].body, "prepared", "attempt"); int(a) != i+1 {
			t.Errorf("retry %d has prepared.attempt %v, want %d", i, a, i+1)
		}
	}
	got := f.waitReady("web", "False")
	if msg, _ := readyCondition(got)["message"].(string); !strings.Contains(msg, "database unreachable") {
		t.Errorf("Ready message %q, want the reconciler's error text", msg)
	}
	if phase, found, _ := unstructured.NestedString(got.Object, "status", "phase"); found {
		t.Errorf("status.phase = %q: the status of an error result must be dropped", phase)
	}
	f.waitEvent("web", corev1.EventTypeWarning, "ReconcileError")
}

// 7. A slow endpoint, a 500, garbage JSON and a 20 MiB body are each a recorded failure;
// ork keeps serving /healthz and reconciling the other CRs.
func TestBadEndpointsAreFailuresNotCrashes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	huge := bytes.Repeat([]byte(" "), 20<<20)
	ep := newEndpoint(t, func(c call) response {
		switch c.crName() {
		case "slow":
			<-c.ctx.Done() // answer only after ork gave up
			return response{status: http.StatusOK, body: []byte(`{"result":"ok"}`)}
		case "fivehundred":
			return response{status: http.StatusInternalServerError, body: []byte("boom")}
		case "garbage":
			return response{status: http.StatusOK, body: []byte("{not json")}
		case "huge":
			return response{status: http.StatusOK, body: append([]byte(`{"result":"ok","error":"`), huge...)}
		}
		return okWithChildren(c)
	})
	eng := f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, timeout: "1s"}), nil)
	wantReason := map[string]string{
		"slow": "RemoteTimeout", "fivehundred": "RemoteHTTPError", "garbage": "InvalidRemoteResponse", "huge": "RemoteResponseTooLarge",
	}
	for name := range wantReason {
		f.createCR(name, map[string]any{})
	}
	f.createCR("good", map[string]any{})

	f.waitReady("good", "True")
	for name, reason := range wantReason {
		// Each retry rewrites the message. Waiting for the expected one, not checking the
		// first False, keeps one slow attempt on a busy machine (a 1s timeout covers the
		// secret read too) from failing the test.
		f.eventually(name+": Ready=False with reason "+reason, func() (bool, error) {
			got, err := f.get(f.gvr, name)
			if err != nil {
				return false, err
			}
			c := readyCondition(got)
			if msg, _ := c["message"].(string); c == nil || c["status"] != "False" || !strings.HasPrefix(msg, reason) {
				return false, fmt.Errorf("Ready condition %v", c) // shown if it never comes
			}
			return true, nil
		})
		f.waitEvent(name, corev1.EventTypeWarning, "ReconcileError")
	}
	if n := testutil.ToFloat64(f.metrics.ReconcileTotal.WithLabelValues("app", "error", "stable")); n < 4 {
		t.Errorf("ork_reconcile_total{result=error} = %v, want at least 4", n)
	}
	for _, code := range []string{"timeout", "500", "200"} {
		if n := histogramCount(t, f.metrics, "ork_remote_request_duration_seconds", "code", code); n == 0 {
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
	ep := newEndpoint(t, func(c call) response {
		if n.Add(1) == 1 {
			return response{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "2"}, body: []byte("slow down")}
		}
		return jsonResponse(map[string]any{"result": "ok"})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	first, second := ep.next(t), ep.next(t)
	if gap := second.at.Sub(first.at); gap < 2*time.Second {
		t.Errorf("retry came %v after the 429, want at least Retry-After (2s); backoff base is only 100ms", gap)
	}
	f.waitReady("web", "True")
}

// histogramCount sums the observations of a histogram's series whose label has value.
func histogramCount(t *testing.T, m *run.Metrics, name, label, value string) uint64 {
	t.Helper()
	return uint64(seriesSum(t, m, name, label, value, true))
}

// seriesSum sums the counter values, or with histogram the observation counts, of the
// series of the metric name whose label has value.
func seriesSum(t *testing.T, m *run.Metrics, name, label, value string, histogram bool) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, metric := range fam.GetMetric() {
			for _, lp := range metric.GetLabel() {
				switch {
				case lp.GetName() != label || lp.GetValue() != value:
				case histogram:
					n += float64(metric.GetHistogram().GetSampleCount())
				default:
					n += metric.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// A CR that another controller's finalizer holds while it is deleted is still there to
// look at: a failed delete call is reported on it (Ready=False, Warning Event) like any other.
func TestFailedDeleteIsReportedWhileAFinalizerHoldsTheCR(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(c call) response {
		if deleting, _, _ := unstructured.NestedBool(c.body, "prepared", "deleting"); deleting {
			return response{status: http.StatusInternalServerError, body: []byte("cannot tear down")}
		}
		return okWithChildren(c)
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"replicas": 1})
	f.waitReady("web", "True")
	hold := `{"metadata":{"finalizers":["example.com/hold"]}}`
	if _, err := f.dyn.Resource(f.gvr).Namespace(f.ns).Patch(t.Context(), "web", types.MergePatchType, []byte(hold), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // let the namespace go
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = f.dyn.Resource(f.gvr).Namespace(f.ns).Patch(ctx, "web", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := f.dyn.Resource(f.gvr).Namespace(f.ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.eventually("Ready=False with RemoteHTTPError on the CR being deleted", func() (bool, error) {
		c := readyCondition(f.getCR("web"))
		if msg, _ := c["message"].(string); c == nil || c["status"] != "False" || !strings.HasPrefix(msg, "RemoteHTTPError") {
			return false, fmt.Errorf("Ready condition %v", c)
		}
		return true, nil
	})
	f.waitEvent("web", corev1.EventTypeWarning, "ReconcileError")
}
