package run_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// faultHold is how long each fault holds; `go test -run TestFault -fault-hold 60s` for the
// issue's full minute.
var faultHold = flag.Duration("fault-hold", 3*time.Second, "how long each fault of the fault suite holds")

// faultEndpoint is a real HTTP reconciler on loopback whose behaviour a fault switches. It
// answers every CR with a Deployment and a Service, and counts calls per CR.
type faultEndpoint struct {
	srv   *httptest.Server
	fault atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
	mu    sync.Mutex
	calls map[string][]time.Time
	// failed counts the calls a fault answered (or broke).
	failed atomic.Int64
	// maxBody is the most bytes one answer of a fault got written to ork's connection.
	maxBody atomic.Int64
}

func newFaultEndpoint(t testing.TB) *faultEndpoint { return newFaultEndpointWith(t, nil) }

// newFaultEndpointWith configures the server before it starts.
func newFaultEndpointWith(t testing.TB, configure func(*http.Server)) *faultEndpoint {
	fe := &faultEndpoint{calls: map[string][]time.Time{}}
	fe.srv = httptest.NewUnstartedServer(http.HandlerFunc(fe.serve))
	if configure != nil {
		configure(fe.srv.Config)
	}
	fe.srv.Start()
	t.Cleanup(fe.srv.Close)
	return fe
}

func (fe *faultEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	name, _, _ := unstructured.NestedString(body, "object", "metadata", "name")
	fe.mu.Lock()
	fe.calls[name] = append(fe.calls[name], time.Now())
	fe.mu.Unlock()
	if f := fe.fault.Load(); f != nil && (*f)(w, r) {
		fe.failed.Add(1)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(runtest.OKWithChildren(call{Call: reconcilertest.Call{Body: body}}).Body)
}

// set turns a fault on; the handler returns true when it answered (or broke) the call.
func (fe *faultEndpoint) set(f func(w http.ResponseWriter, r *http.Request) bool) { fe.fault.Store(&f) }
func (fe *faultEndpoint) clear()                                                  { fe.fault.Store(nil) }

// callsBetween counts each CR's calls in [from, to).
func (fe *faultEndpoint) callsBetween(from, to time.Time) map[string]int {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	out := map[string]int{}
	for name, ts := range fe.calls {
		for _, at := range ts {
			if !at.Before(from) && at.Before(to) {
				out[name]++
			}
		}
	}
	return out
}

// backoffCalls is how many calls one key can make in d with the test engine's backoff
// (100ms doubling to 5s), plus the create and update events that start a pass at once.
func backoffCalls(d time.Duration) int {
	n, delay := 1, 100*time.Millisecond
	for elapsed := time.Duration(0); elapsed < d; n++ {
		elapsed += delay
		delay = min(2*delay, 5*time.Second)
	}
	return n + 2
}

// faultRun is the shape every fault test shares: ork starts healthy; while the fault holds,
// n CRs are created and each updated once; then the fault ends. Every CR must reach Ready at
// generation 2 with its children (all of them), /healthz must answer throughout, ork must
// not exit, and calls during the fault must stay within what the backoff allows.
type faultRun struct {
	n     int
	on    func()
	off   func()
	tune  []func(*run.Options)
	cfg   func(*fixture) (endpoint string)
	bound func(hold time.Duration) int // max calls per CR during the fault; default backoffCalls
	// reason is the one docs/reliability.md gives for the fault: Ready=False says
	// ReconcileError, with a message that starts "<reason>: ".
	reason string
	// failed is how the test knows calls failed while the fault held: the fault server saw
	// them; default the engine's error metric.
	failed func() int64
}

func (fr faultRun) run(t *testing.T, f *fixture, fe *faultEndpoint) {
	t.Helper()
	endpoint := fe.srv.URL
	if fr.cfg != nil {
		endpoint = fr.cfg(f)
	}
	eng := f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: endpoint, Timeout: "1s"}), nil, fr.tune...)
	unhealthy := watchHealth(t, eng)
	fr.on()
	from := time.Now()
	for i := range fr.n {
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{"v": 1})
	}
	for i := range fr.n {
		f.PatchSpec(fmt.Sprintf("cr-%d", i), `{"spec":{"v":2}}`)
	}
	// While the fault holds, it must be seen: calls fail and a CR says why. The first calls
	// go out as the CRs are created; 30 s (eventually's bound) only catches a fault that is
	// never seen, and the fault holds until it is.
	f.Eventually("the fault seen: calls failed and a CR Ready=False with "+fr.reason, func() (bool, error) {
		failed := testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "error", "stable"))
		if fr.failed != nil {
			failed = float64(fr.failed())
		}
		for i := range fr.n {
			c := runtest.ReadyCondition(f.GetCR(fmt.Sprintf("cr-%d", i)))
			// The condition's reason is ReconcileError; the fault's own leads its message
			// (docs/remote-reconciler.md#every-outcome-and-what-ork-does).
			msg, _ := c["message"].(string)
			if failed > 0 && c != nil && c["status"] == "False" && c["reason"] == "ReconcileError" &&
				strings.HasPrefix(msg, fr.reason+": ") {
				return true, nil
			}
		}
		return false, fmt.Errorf("%v failed calls; Ready of cr-0: %v", failed, runtest.ReadyCondition(f.GetCR("cr-0")))
	})
	select {
	case <-time.After(time.Until(from.Add(*faultHold))):
	case <-t.Context().Done():
	}
	to := time.Now()
	fr.off()
	for i := range fr.n {
		name := fmt.Sprintf("cr-%d", i)
		f.Eventually(name+" Ready at generation 2 with its children", func() (bool, error) {
			cr := f.GetCR(name)
			og, _, _ := unstructured.NestedInt64(cr.Object, "status", "observedGeneration")
			c := runtest.ReadyCondition(cr)
			_, errD := f.Get(runtest.Deployments, name)
			_, errS := f.Get(runtest.Services, name+"-svc")
			return c != nil && c["status"] == "True" && og == 2 && errD == nil && errS == nil, nil
		})
	}
	if msg := unhealthy(); msg != "" {
		t.Errorf("/healthz failed during the fault: %s", msg)
	}
	bound := backoffCalls(to.Sub(from))
	if fr.bound != nil {
		bound = fr.bound(to.Sub(from))
	}
	for name, n := range fe.callsBetween(from, to) {
		if n > bound {
			t.Errorf("%s got %d calls in the %v of the fault, want at most %d: it ran hot", name, n, to.Sub(from).Round(time.Millisecond), bound)
		}
	}
}

// watchHealth polls /healthz until the test ends; the returned func tells the first failure.
func watchHealth(t *testing.T, eng *run.Engine) func() string {
	var first atomic.Pointer[string]
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	// A probe that hangs is a failed probe too (the kubelet's timeoutSeconds): 2 s, beyond
	// what a loaded 2-core machine needs to answer from memory.
	client := &http.Client{Timeout: 2 * time.Second}
	go func() {
		for ctx.Err() == nil {
			res, err := client.Get("http://" + eng.HealthAddr() + "/healthz")
			msg := ""
			switch {
			case err != nil:
				msg = err.Error()
			case res.StatusCode != http.StatusOK:
				msg = res.Status
			}
			if res != nil {
				res.Body.Close()
			}
			if msg != "" {
				first.CompareAndSwap(nil, &msg)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() string {
		if m := first.Load(); m != nil {
			return *m
		}
		return ""
	}
}

// 12.1–12.8 The endpoint misbehaves in each of the ways real ones do; ork keeps running and
// every CR converges once it behaves again.
func TestFaultsOfTheEndpoint(t *testing.T) {
	t.Parallel()
	answer := func(code int, body string) func(w http.ResponseWriter, _ *http.Request) bool {
		return func(w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name string
		on   func(fe *faultEndpoint, proxy *runtest.TCPProxy)
		off  func(fe *faultEndpoint, proxy *runtest.TCPProxy)
		// behindProxy sends ork to the endpoint through a proxy that can be cut.
		behindProxy bool
		bound       func(time.Duration) int
		// reason is docs/reliability.md's for the row.
		reason string
	}{
		{name: "hangs past the timeout", reason: "RemoteTimeout", on: func(fe *faultEndpoint, _ *runtest.TCPProxy) {
			fe.set(func(_ http.ResponseWriter, r *http.Request) bool { <-r.Context().Done(); return true })
		}},
		{name: "answers 500", reason: "RemoteHTTPError", on: func(fe *faultEndpoint, _ *runtest.TCPProxy) { fe.set(answer(500, "boom")) }},
		{name: "answers 429 with Retry-After", reason: "RemoteThrottled", on: func(fe *faultEndpoint, _ *runtest.TCPProxy) {
			fe.set(func(w http.ResponseWriter, _ *http.Request) bool {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			})
		},
			// The pause holds for the whole endpoint: beside the first calls, one per key per
			// Retry-After at most.
			bound: func(d time.Duration) int { return int(d/(2*time.Second)) + 3 }},
		{name: "answers garbage", reason: "InvalidRemoteResponse", on: func(fe *faultEndpoint, _ *runtest.TCPProxy) { fe.set(answer(200, "<html>gateway</html>")) }},
		{name: "streams a 100 MB body", reason: "RemoteResponseTooLarge", on: func(fe *faultEndpoint, _ *runtest.TCPProxy) {
			fe.set(func(w http.ResponseWriter, _ *http.Request) bool {
				w.WriteHeader(http.StatusOK)
				chunk := []byte(strings.Repeat(" ", 64<<10))
				written := int64(0)
				for range 100 << 20 / len(chunk) {
					n, err := w.Write(chunk)
					written += int64(n)
					if err != nil {
						break // ork stopped reading at its 8 MiB limit
					}
				}
				for m := fe.maxBody.Load(); written > m && !fe.maxBody.CompareAndSwap(m, written); m = fe.maxBody.Load() {
				}
				return true
			})
		}},
		{name: "resets connections mid-response", reason: "RemoteUnreachable", on: func(fe *faultEndpoint, _ *runtest.TCPProxy) {
			fe.set(func(w http.ResponseWriter, _ *http.Request) bool {
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return false
				}
				_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"result\":")
				_ = buf.Flush()
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				conn.Close()
				return true
			})
		}},
		{name: "is down and comes back", reason: "RemoteUnreachable", behindProxy: true,
			on: func(_ *faultEndpoint, p *runtest.TCPProxy) { p.Down() }, off: func(_ *faultEndpoint, p *runtest.TCPProxy) { p.Up() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			// A small send buffer on the server's side of each connection: what it wrote is
			// then what ork read, give or take that buffer and ork's receive buffer.
			fe := newFaultEndpointWith(t, func(s *http.Server) {
				s.ConnState = func(c net.Conn, st http.ConnState) {
					if tc, ok := c.(*net.TCPConn); ok && st == http.StateNew {
						_ = tc.SetWriteBuffer(sendBuffer)
					}
				}
			})
			var proxy *runtest.TCPProxy
			fr := faultRun{n: 4, bound: tt.bound, reason: tt.reason,
				on: func() { tt.on(fe, proxy) },
				off: func() {
					fe.clear()
					if tt.off != nil {
						tt.off(fe, proxy)
					}
				}}
			if tt.behindProxy {
				fr.cfg = func(*fixture) string {
					proxy = runtest.NewTCPProxy(t, strings.TrimPrefix(fe.srv.URL, "http://"))
					return "http://" + proxy.Addr()
				}
			}
			fr.run(t, f, fe)
			if tt.reason == "RemoteResponseTooLarge" {
				// Memory stays bounded: ork read at most its limit of one body, plus the
				// buffers between (this side's send buffer, doubled by the kernel, and at
				// most the kernel's largest receive buffer on ork's side, plus a 1 MiB
				// margin for the HTTP stack's own): far below the 100 MB sent when ork reads
				// all.
				bound := int64(remote.DefaultMaxBodyBytes) + 2*sendBuffer + maxReceiveBuffer(t) + 1<<20
				if got := fe.maxBody.Load(); got == 0 || got > bound {
					t.Errorf("one 100 MB answer got %d bytes onto ork's connection, want 1..%d (8 MiB limit plus buffers)", got, bound)
				}
			}
		})
	}
}

// sendBuffer is the fault server's socket send buffer in TestFaultsOfTheEndpoint.
const sendBuffer = 64 << 10

// maxReceiveBuffer is the largest receive buffer Linux grows a TCP socket to (tcp_rmem's
// third field); 6 MiB, the kernel's default, where it cannot be read.
func maxReceiveBuffer(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_rmem")
	if f := strings.Fields(string(b)); err == nil && len(f) == 3 {
		if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			return n
		}
	}
	t.Logf("tcp_rmem unreadable (%v): assuming 6 MiB", err)
	return 6 << 20
}

// 12.8 An endpoint that closes idle keep-alive connections (as Node, Python and gunicorn
// servers do after a few idle seconds) causes no failed reconcile: a call sent on a
// connection the server just closed is sent again on a new one. Deterministic, not timed:
// this endpoint answers one request per connection and closes it as soon as the next
// request's first bytes arrive, so every call after the first meets a closed connection.
func TestFaultIdleConnectionsClosedByTheEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns, answered atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				raw, _ := io.ReadAll(req.Body)
				var body map[string]any
				_ = json.Unmarshal(raw, &body)
				res := runtest.OKWithChildren(call{Call: reconcilertest.Call{Body: body}})
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(res.Body), res.Body)
				answered.Add(1)
				_, _ = br.ReadString('\n') // the next request on this connection: closed unanswered
			}()
		}
	}()
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: "http://" + ln.Addr().String()}), nil)
	for i := range 4 { // one after another: each call finds the last one's connection idle
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	if n := testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "error", "stable")); n != 0 {
		t.Errorf("%v failed reconciles against an endpoint closing idle connections, want 0", n)
	}
	// Each call after the first was sent on a closed connection and again on a new one.
	if c, a := conns.Load(), answered.Load(); c < a || a < 4 {
		t.Errorf("%d connections for %d answers, want a new connection per answer (at least 4)", c, a)
	}
}

// 12.9 The apiserver unreachable, every connection cut and new ones refused, as across its
// restart, while CRs are created: ork keeps running, /healthz stays up (judged ten minutes
// in), and converges when it is back; cut again while a pass is in its call, the pass's
// writes fail (the error metric rises) and are retried until it is back. (The relist a
// restart can force is TestFaultWatchExpired.)
func TestFaultAPIServerUnreachable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fe := newFaultEndpoint(t)
	apiserver, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := runtest.NewTCPProxy(t, apiserver.Host)
	cfg := restConfigVia(proxy)
	eng := f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: fe.srv.URL}), cfg)
	unhealthy := watchHealth(t, eng)
	// /healthz is judged by a clock the test moves: the outage lasts "ten minutes" for it,
	// five times its bounds, in faultHold of real time.
	var skew atomic.Int64
	run.SetHealthClock(eng, func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	proxy.Down()
	for i := range 4 { // created through the test's own client, while ork cannot reach it
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
	}
	skew.Store(int64(10 * time.Minute))
	select {
	case <-time.After(*faultHold):
	case <-t.Context().Done():
	}
	if code, body := healthz(t, eng); code != http.StatusOK {
		t.Errorf("/healthz answered %d %q ten minutes into the apiserver's outage: a liveness probe would restart ork for it", code, body)
	}
	proxy.Up()
	for i := range 4 {
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	skew.Store(0)
	// A second outage while a pass is in its call: the pass's writes fail, and are retried
	// with backoff until the apiserver is back.
	release := make(chan struct{})
	fe.set(func(_ http.ResponseWriter, r *http.Request) bool {
		select { // held until the apiserver is cut
		case <-release:
		case <-r.Context().Done():
		}
		return false // then answered as usual
	})
	errorsBefore := testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "error", "stable"))
	f.CreateCR("late", map[string]any{})
	f.Eventually("the call for late", func() (bool, error) { return fe.callsBetween(time.Time{}, time.Now())["late"] > 0, nil })
	proxy.Down()
	fe.clear()
	close(release)
	f.Eventually("a write of the pass failed", func() (bool, error) {
		return testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "error", "stable")) > errorsBefore, nil
	})
	proxy.Up()
	f.WaitReady("late", "True")
	if msg := unhealthy(); msg != "" {
		t.Errorf("/healthz failed while the apiserver was unreachable: %s", msg)
	}
}

// 12.10 The watch on the CRs (exactly that watch: not the children's) breaks and the next
// one is answered 410 Gone, so the informer lists again: each CR that existed before gets
// exactly one call, with trigger resync, and nothing else; CRs created afterwards are seen
// through the new watch.
func TestFaultWatchExpired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	faults := newAPIFaults()
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), faults.config(env.Config))
	for i := range 4 {
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	f.waitPassesDone(ep)
	before := map[string]int{}
	for i := range 4 {
		before[fmt.Sprintf("cr-%d", i)] = len(ep.CallsFor(fmt.Sprintf("cr-%d", i)))
	}
	children := f.triggers("child")
	// The engine watches every namespace (no WatchNamespaces): the CRs' watch is this path.
	crWatch := "/apis/" + f.Group + "/v1/apps"
	faults.expireWatches(crWatch)
	if faults.cut() != 1 {
		t.Fatalf("%d watch streams on %s cut, want exactly the CRs' one", faults.cut(), crWatch)
	}
	f.Eventually("the relist", func() (bool, error) { return faults.expired() == 1, nil })
	f.Eventually("one call per CR after the relist", func() (bool, error) {
		for name, n := range before {
			if len(ep.CallsFor(name)) == n {
				return false, fmt.Errorf("no call for %s yet", name)
			}
		}
		return true, nil
	})
	// Quiet: CRs created afterwards go through the new watch and their passes end after any
	// late second call the relist would have caused (one worker queue, in order of arrival).
	for i := 4; i < 6; i++ {
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
	}
	for i := range 6 {
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	f.waitPassesDone(ep)
	for name, n := range before {
		extra := ep.CallsFor(name)[n:]
		var triggers []string
		for _, c := range extra {
			triggers = append(triggers, c.Trigger)
		}
		if len(extra) != 1 || extra[0].Trigger != "resync" {
			t.Errorf("%s got calls %v after the relist, want exactly one resync", name, triggers)
		}
	}
	if got := f.triggers("child") - children; got != 0 {
		t.Errorf("%v child triggers after the relist: the children's watches were cut too", got)
	}
}

// 12.13 30 updates of one CR within a second: the first is held at a gate inside its call
// while the other 29 land, so they arrive while the key is busy: they fold into exactly one
// more call, which carries the last spec, and ork's own echoes cost nothing.
func TestFaultUpdateStorm(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gate := make(chan struct{})
	var gated atomic.Bool
	ep := runtest.NewEndpoint(t, func(c call) response {
		if v, _, _ := unstructured.NestedFloat64(c.Body, "object", "spec", "v"); v == 1 && gated.CompareAndSwap(false, true) {
			select { // the first update's call waits for the rest of the storm
			case <-gate:
			case <-c.Ctx.Done():
			}
		}
		return runtest.OKWithChildren(c)
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"v": 0})
	f.WaitReady("web", "True")
	f.waitPassesDone(ep)
	before := len(ep.CallsFor("web"))
	updates := f.triggers("update")
	f.PatchSpec("web", `{"spec":{"v":1}}`)
	ep.NextMatching(t, "for the first update", func(c call) bool {
		v, _, _ := unstructured.NestedFloat64(c.Body, "object", "spec", "v") // encoding/json: float64
		return v == 1
	})
	for v := 2; v <= 30; v++ {
		f.PatchSpec("web", fmt.Sprintf(`{"spec":{"v":%d}}`, v))
	}
	// Every update reached ork's informer (each counts one update trigger) while the key is
	// busy, before the gate opens.
	f.Eventually("the 30 updates seen by ork", func() (bool, error) {
		return f.triggers("update")-updates >= 30, nil
	})
	close(gate)
	f.Eventually("the last spec reconciled", func() (bool, error) {
		cr := f.GetCR("web")
		og, _, _ := unstructured.NestedInt64(cr.Object, "status", "observedGeneration")
		if og == 31 {
			return true, nil
		}
		return false, fmt.Errorf("generation %d, observedGeneration %d", cr.GetGeneration(), og)
	})
	f.waitPassesDone(ep)
	calls := ep.CallsFor("web")[before:]
	var specs []float64
	for _, c := range calls {
		v, _, _ := unstructured.NestedFloat64(c.Body, "object", "spec", "v")
		specs = append(specs, v)
	}
	if len(specs) != 2 || specs[0] != 1 || specs[1] != 30 {
		t.Errorf("calls after the storm carried specs %v, want [1 30]: the held one, then exactly one more with the last spec", specs)
	}
	if got := f.triggers("child"); got != 0 {
		t.Errorf("%v child triggers: ork's own applies came back as changes", got)
	}
}

// healthz asks /healthz once, with a client timeout.
func healthz(t *testing.T, eng *run.Engine) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second} // answered from memory; 5 s is a hang
	res, err := client.Get("http://" + eng.HealthAddr() + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, strings.TrimSpace(string(b))
}

// /healthz fails when a worker has been inside one pass longer than the CRD's timeout plus 2
// minutes: a restart is the cure. The clock /healthz judges by is moved, not waited for.
func TestHealthzFailsForAWorkerStuckInAPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	release := make(chan struct{})
	ep := runtest.NewEndpoint(t, func(c call) response {
		select { // holds the pass until the test has seen /healthz fail
		case <-release:
		case <-c.Ctx.Done():
		}
		return runtest.OKWithChildren(c)
	})
	eng := f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "30s"}), nil)
	var skew atomic.Int64
	run.SetHealthClock(eng, func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	f.CreateCR("web", map[string]any{})
	ep.Next(t) // the pass is inside its call
	if code, body := healthz(t, eng); code != http.StatusOK {
		t.Fatalf("/healthz answered %d %q at the start of a pass", code, body)
	}
	// 30 s timeout + 2 min - 5 s: within the bound even if the pass began 5 s of real time
	// before the skew (a loaded machine's worst case between Get and the call arriving).
	skew.Store(int64(30*time.Second + 2*time.Minute - 5*time.Second))
	if code, body := healthz(t, eng); code != http.StatusOK {
		t.Errorf("/healthz answered %d %q within the timeout plus 2 minutes", code, body)
	}
	skew.Store(int64(30*time.Second + 2*time.Minute + time.Second))
	code, body := healthz(t, eng)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "inside the pass of "+f.NS+"/web") {
		t.Errorf("/healthz answered %d %q past the timeout plus 2 minutes, want 503 naming the stuck pass", code, body)
	}
	close(release)
	f.WaitReady("web", "True")
	f.Eventually("/healthz well again once the pass ended", func() (bool, error) {
		code, _ := healthz(t, eng)
		return code == http.StatusOK, nil
	})
}
