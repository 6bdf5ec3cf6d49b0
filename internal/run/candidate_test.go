package run

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run/remote"
)

// A CR's shadow call waits for its previous one: a second pass of the same CR while the
// candidate still answers the first sends nothing (counted as skipped), so two answers for
// one CR never overlap or land out of order; another CR's call goes.
func TestOneShadowCallPerCRAtATime(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		<-release
		_, _ = w.Write([]byte(`{"result":"ok"}`))
	}))
	defer srv.Close()
	crd := &katalog.CRD{Name: "app", APITypes: &katalog.APITypes{Group: "t.ork.test", Version: "v1", Kind: "App", Plural: "apps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Remote: &katalog.Remote{Endpoint: srv.URL, Timeout: "30s"}}}}
	r, err := remote.New(crd, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{crd: "app", r: r, plan: rollout.Plan{Mode: rollout.ModeShadow}, slots: make(chan struct{}, 4), metrics: m.candidate,
		log: slog.New(slog.DiscardHandler), now: time.Now, ctx: ctx, cancel: cancel,
		logged: map[string]string{}, badPins: map[types.UID]bool{}, inFlight: map[string]bool{}}
	req := func(name string) remote.Request {
		return remote.Request{Key: "ns/" + name, Trigger: remote.TriggerUpdate, Attempt: 1,
			Object: map[string]any{"apiVersion": "t.ork.test/v1", "kind": "App", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
	}
	c.shadow(req("a"), "ns", "a", nil)
	c.shadow(req("a"), "ns", "a", nil)
	c.shadow(req("b"), "ns", "b", nil)
	deadline := time.Now().Add(10 * time.Second) // generous: two local requests arrive in milliseconds
	for calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := testutil.ToFloat64(m.candidate.skipped.WithLabelValues("app")); calls.Load() != 2 || n != 1 {
		t.Errorf("%d calls reached the candidate, %v skipped; want 2 (one per CR) and the second of a skipped", calls.Load(), n)
	}
	close(release)
	c.close()
}
