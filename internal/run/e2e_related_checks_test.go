package run_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testkit"
)

// checkGate holds the engine's GETs of single Services while closed and counts them in
// flight. In TestRelatedStatusChecksNeverHoldTheWatch those are the digest reads only: a
// pass reads its related Services by selector (a LIST), and the watch lists and watches.
type checkGate struct {
	prefix   string // /api/v1/namespaces/<ns>/services/
	open     chan struct{}
	openOnce sync.Once
	mu       sync.Mutex
	inFlight int
	max      int
	seen     map[string]bool // "name@resourceVersion" of every GET
}

func newCheckGate(ns string) *checkGate {
	return &checkGate{prefix: "/api/v1/namespaces/" + ns + "/services/", open: make(chan struct{}), seen: map[string]bool{}}
}

func (g *checkGate) config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			name, ok := strings.CutPrefix(req.URL.Path, g.prefix)
			if req.Method != http.MethodGet || !ok || name == "" || strings.Contains(name, "/") {
				return rt.RoundTrip(req)
			}
			g.enter(name + "@" + req.URL.Query().Get("resourceVersion"))
			defer g.leave()
			select {
			case <-g.open:
			case <-req.Context().Done(): // the read's own bound, or the engine stopping
				return nil, req.Context().Err()
			}
			return rt.RoundTrip(req)
		})
	})
	return out
}

func (g *checkGate) enter(read string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen[read] = true
	g.inFlight++
	g.max = max(g.max, g.inFlight)
}

func (g *checkGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
}

func (g *checkGate) release() { g.openOnce.Do(func() { close(g.open) }) }

// state is the GETs in flight now, the most ever, and whether read ("name@rv") was sent.
func (g *checkGate) state(read string) (inFlight, most int, sent bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight, g.max, g.seen[read]
}

// A Service keeps no metadata.generation: each change that leaves its metadata alike needs a
// read of the object (its digest tells a status-only change). Under a burst of such changes
// (320, more than the old queue of 256 held) with every read held at a gate, the watch's
// handler never waits: a later event of the same watch (a new Service) passes its CR while
// the reads are still held; the reads in flight never exceed the pool; and once the gate
// opens each Service is read at its last version and its spec change passes its CR.
func TestRelatedStatusChecksNeverHoldTheWatch(t *testing.T) {
	t.Parallel()
	const objects, rounds = 8, 40 // 8 Services: twice the pool, so that the bound shows
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"apps/deployments"}, Payload: `              related:
                - {as: svcs, kind: Service, selector: {matchLabels: {app: "{{ .metadata.name }}"}}}
`})
	svcs := env.Clientset.CoreV1().Services(f.NS)
	service := func(name, app string) {
		t.Helper()
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := svcs.Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range objects {
		service(fmt.Sprintf("svc-%d", i), fmt.Sprintf("cr-%d", i))
	}
	gate := newCheckGate(f.NS)
	f.Start(set, gate.config(env.Config), func(o *run.Options) { o.ChildMinInterval = 100 * time.Millisecond })
	t.Cleanup(gate.release) // before the engine stops (cleanups run last first)
	for i := range objects {
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
	}
	f.CreateCR("probe", map[string]any{})
	for i := range objects {
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	f.WaitReady("probe", "True")
	if in, _, _ := gate.state(""); in != 0 {
		t.Fatalf("%d Service GETs in flight before any change", in)
	}

	// The burst: status-only changes, each needing a read the gate holds.
	var wg sync.WaitGroup
	for i := range objects {
		wg.Go(func() {
			for r := range rounds {
				patch := fmt.Appendf(nil, `{"status":{"conditions":[{"type":"Burst","status":"True","reason":"Round","message":"round %d","lastTransitionTime":"2020-01-01T00:00:00Z"}]}}`, r)
				if _, err := svcs.Patch(t.Context(), fmt.Sprintf("svc-%d", i), types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// A later event of the same watch: it reaches the handler only if none of the burst's
	// events is still held in it. Bounded by NextMatching's 30 s: the reads stay held.
	service("probe-svc", "probe")
	ep.NextMatching(t, "a pass of probe with probe-svc while the reads are held", func(c call) bool {
		rel, _ := relatedOf(t, c)
		return c.CRName() == "probe" && len(rel["svcs"]) == 1
	})
	// The pool fills up: the reads run side by side, and no more than it.
	f.Eventually(fmt.Sprintf("%d reads held at the gate", run.RelatedCheckers), func() (bool, error) {
		in, most, _ := gate.state("")
		if most > run.RelatedCheckers {
			return false, testkit.Permanent(fmt.Errorf("%d Service GETs in flight, want at most the pool's %d", most, run.RelatedCheckers))
		}
		return in == run.RelatedCheckers, nil
	})

	// A spec change of each, still held: it folds into the read waiting for the object.
	last := map[string]string{}
	for i := range objects {
		name := fmt.Sprintf("svc-%d", i)
		s, err := svcs.Patch(t.Context(), name, types.MergePatchType, []byte(`{"spec":{"publishNotReadyAddresses":true}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last[name] = s.ResourceVersion
	}
	gate.release()
	passed := map[string]bool{}
	for len(passed) < objects {
		c := ep.NextMatching(t, "a pass with a Service's spec change", func(c call) bool {
			rel, _ := relatedOf(t, c)
			if len(rel["svcs"]) != 1 {
				return false
			}
			spec, _ := rel["svcs"][0]["spec"].(map[string]any)
			return spec["publishNotReadyAddresses"] == true
		})
		passed[c.CRName()] = true
	}
	for name, rv := range last {
		if _, _, sent := gate.state(name + "@" + rv); !sent {
			t.Errorf("%s was never read at its last version %s", name, rv)
		}
	}
	if _, most, _ := gate.state(""); most > run.RelatedCheckers {
		t.Errorf("%d Service GETs were in flight at once, want at most the pool's %d", most, run.RelatedCheckers)
	}
}
