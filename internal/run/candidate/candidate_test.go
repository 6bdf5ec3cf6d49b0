package candidate

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/rollout"
)

// shadowHarness is a candidate whose reconciler holds every call until release is closed,
// recording the calls per CR and the most calls for one CR at once.
type shadowHarness struct {
	c       *Candidate
	m       Metrics
	release chan struct{}
	mu      sync.Mutex
	calls   map[string]int
	out     map[string]int
	overlap bool
}

func newShadowHarness(t *testing.T, slots, backlog int) *shadowHarness {
	h := &shadowHarness{release: make(chan struct{}), calls: map[string]int{}, out: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"object"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		name := body.Object.Metadata.Name
		h.mu.Lock()
		h.calls[name]++
		h.out[name]++
		h.overlap = h.overlap || h.out[name] > 1
		h.mu.Unlock()
		<-h.release
		h.mu.Lock()
		h.out[name]--
		h.mu.Unlock()
		_, _ = w.Write([]byte(`{"result":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	crd := &katalog.CRD{Name: "app", APITypes: &katalog.APITypes{Group: "t.ork.test", Version: "v1", Kind: "App", Plural: "apps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Remote: &katalog.Remote{Endpoint: srv.URL, Timeout: "30s"}}}}
	r, err := remote.New(crd, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.m = NewMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	h.c = &Candidate{crd: "app", r: r, plan: rollout.Plan{Mode: rollout.ModeShadow}, slots: make(chan struct{}, slots), metrics: h.m,
		log: slog.New(slog.DiscardHandler), now: time.Now, ctx: ctx, cancel: cancel, backlog: backlog,
		logged: map[string]loggedPaths{}, badPins: map[types.UID]bool{}, inFlight: map[string]bool{}}
	return h
}

func (h *shadowHarness) shadow(name string) {
	h.c.Shadow(remote.Request{Key: "ns/" + name, Trigger: remote.TriggerUpdate, Attempt: 1,
		Object: map[string]any{"apiVersion": "t.ork.test/v1", "kind": "App", "metadata": map[string]any{"name": name, "namespace": "ns"}}}, "ns", name, nil)
}

// waitCalls waits until n calls reached the reconciler; the bound is generous, local
// requests arrive in milliseconds.
func (h *shadowHarness) waitCalls(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		h.mu.Lock()
		got := 0
		for _, c := range h.calls {
			got += c
		}
		h.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("fewer than %d calls reached the candidate: %v", n, h.calls)
}

// A CR's shadow call waits for its previous one: a second pass of the same CR while the
// candidate still answers the first waits in the backlog and goes once the first is
// answered, so two answers for one CR never overlap or land out of order; another CR's call
// goes at once.
func TestOneShadowCallPerCRAtATime(t *testing.T) {
	h := newShadowHarness(t, 4, 0)
	h.shadow("a")
	h.shadow("a")
	h.shadow("b")
	h.waitCalls(t, 2)
	close(h.release)
	h.waitCalls(t, 3)
	h.c.Close()
	if h.calls["a"] != 2 || h.calls["b"] != 1 || h.overlap {
		t.Errorf("calls %v, overlap %v; want a twice (one after the other), b once", h.calls, h.overlap)
	}
	if n := testutil.ToFloat64(h.m.skipped.WithLabelValues("app")); n != 0 {
		t.Errorf("%v shadow calls skipped, want none", n)
	}
}

// A burst is shadowed whole: 20 CRs at once with 4 slots each reach the candidate on their
// first pass; a newer pass of a waiting CR replaces its request. Past the backlog's bound a
// pass's shadow call is skipped and counted.
func TestShadowBurstWaitsInTheBacklog(t *testing.T) {
	for _, tc := range []struct {
		name            string
		backlog         int
		wantCalls, skip int
	}{
		{name: "default backlog", wantCalls: 20},
		{name: "backlog of 6", backlog: 6, wantCalls: 10, skip: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newShadowHarness(t, 4, tc.backlog)
			for i := range 20 {
				h.shadow(fmt.Sprintf("cr-%02d", i))
			}
			h.waitCalls(t, 4)
			h.shadow("cr-19") // waiting (or skipped): replaced, never a second call
			close(h.release)
			h.waitCalls(t, tc.wantCalls)
			h.c.Close()
			total := 0
			for name, n := range h.calls {
				total += n
				if n != 1 {
					t.Errorf("%s called %d times, want once", name, n)
				}
			}
			skipped := testutil.ToFloat64(h.m.skipped.WithLabelValues("app"))
			if tc.skip > 0 {
				skipped-- // cr-19's second pass, past the bound too
			}
			if total != tc.wantCalls || int(skipped) != tc.skip {
				t.Errorf("%d calls, %v skipped; want %d and %d", total, skipped, tc.wantCalls, tc.skip)
			}
		})
	}
}
