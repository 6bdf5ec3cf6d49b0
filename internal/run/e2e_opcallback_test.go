package run_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/opcallback"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testkit"
)

// postCallback POSTs body to url and returns the status code.
func postCallback(t *testing.T, url string, body map[string]any) int {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// With the completion callback on, a reconciler that answered pending with an hour's
// pollAfter reports completion to the callback URL of the call that started the operation:
// the custom resource is Ready at once, with no poll in between (two calls: the start and
// the final one). A forged token and the same callback replayed once the operation ended
// are refused and change nothing.
func TestACompletionCallbackEndsTheWaitWithoutAPoll(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := []byte("0123456789abcdef0123456789abcdef")
	if _, err := env.Clientset.CoreV1().Secrets(f.NS).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "op-callback"}, Data: map[string][]byte{"key": key},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var finished atomic.Bool
	var mu sync.Mutex
	var startCallback map[string]any
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.CRName() != "db" {
			return runtest.JSONResponse(map[string]any{"result": "ok"})
		}
		if finished.Load() {
			return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}})
		}
		if preparedOperation(c) == nil {
			mu.Lock()
			startCallback, _, _ = unstructured.NestedMap(c.Body, "prepared", "callback")
			mu.Unlock()
		}
		return pendingAnswer("op-1", map[string]any{"pollAfter": "1h"})
	})
	addr := testkit.FreeAddr(t)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "5s"}), nil, func(o *run.Options) {
		o.OperationCallbackURL, o.OperationCallbackAddr, o.OperationCallbackSecret = "http://"+addr+"/", addr, "op-callback"
	})
	f.CreateCR("db", map[string]any{})
	f.Eventually("db pending", func() (bool, error) {
		return runtest.ReadyCondition(f.GetCR("db"))["reason"] == operation.ReasonPending, nil
	})
	mu.Lock()
	url, _ := startCallback["url"].(string)
	token, _ := startCallback["token"].(string)
	mu.Unlock()
	if token == "" || url != "http://"+addr+"/operations/"+token {
		t.Fatalf("the start call's prepared.callback = %v, want the URL of the listener with the token", startCallback)
	}
	pending := f.GetCR("db")
	body := map[string]any{"namespace": f.NS, "name": "db", "uid": string(pending.GetUID()), "generation": 1, "id": "op-1"}
	counted := func(result string) float64 {
		return testutil.ToFloat64(f.Metrics.OperationCallbacks.WithLabelValues(result))
	}

	forged := opcallback.Token([]byte("not-the-key-not-the-key"), pending.GetUID(), 1, "op-1")
	if code := postCallback(t, "http://"+addr+"/operations/"+forged, body); code != http.StatusForbidden {
		t.Errorf("a forged token: status %d, want 403", code)
	}
	if got := f.GetCR("db"); got.GetResourceVersion() != pending.GetResourceVersion() || len(ep.CallsFor("db")) != 1 {
		t.Errorf("a forged callback changed something: resourceVersion %s -> %s, %d calls", pending.GetResourceVersion(), got.GetResourceVersion(), len(ep.CallsFor("db")))
	}

	finished.Store(true)
	if code := postCallback(t, url, body); code != http.StatusAccepted {
		t.Fatalf("the callback: status %d, want 202", code)
	}
	ready := f.WaitReady("db", "True")
	if _, held, _ := unstructured.NestedMap(ready.Object, "status", "operation"); held {
		t.Errorf("status.operation is still there after the final answer: %v", ready.Object["status"])
	}
	calls := ep.CallsFor("db")
	if len(calls) != 2 {
		t.Fatalf("the reconciler was called %d times, want 2: the start and the final call", len(calls))
	}
	op := preparedOperation(calls[1])
	if op == nil || op["id"] != "op-1" || op["polls"] != float64(0) {
		t.Errorf("the woken call carries prepared.operation %v, want op-1 with no poll before it", op)
	}
	if cb, _, _ := unstructured.NestedMap(op, "callback"); cb["token"] == "" || cb["token"] == token || !strings.HasSuffix(cb["url"].(string), "/operations/"+cb["token"].(string)) {
		t.Errorf("the held operation's callback = %v, want its own token", cb)
	}

	if code := postCallback(t, url, body); code != http.StatusForbidden {
		t.Errorf("the callback replayed after the operation ended: status %d, want 403", code)
	}
	if got := f.GetCR("db"); got.GetResourceVersion() != ready.GetResourceVersion() || len(ep.CallsFor("db")) != 2 {
		t.Errorf("a replayed callback changed something: resourceVersion %s -> %s, %d calls", ready.GetResourceVersion(), got.GetResourceVersion(), len(ep.CallsFor("db")))
	}
	for result, want := range map[string]float64{opcallback.ResultForged: 1, opcallback.ResultAccepted: 1, opcallback.ResultNotHeld: 1} {
		if got := counted(result); got != want {
			t.Errorf("ork_operation_callbacks_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if strings.Contains(f.Logs.String(), token) {
		t.Error("the token is in ork's log")
	}
}
