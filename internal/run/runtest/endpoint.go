package runtest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/wireschema"
)

// wire checks every request ork sends against the published PreparedRequest schema; built
// once per test binary, as loading the schema is the slow part.
var wire = sync.OnceValues(wireschema.New)

// Call is one request the loopback reconciler received, as internal/reconcilertest
// recorded it: Ctx ends when ork gives up on the request, Start is its arrival.
type Call struct{ reconcilertest.Call }

// CRName is the name of the request's custom resource.
func (c Call) CRName() string {
	o, _ := c.Body["object"].(map[string]any)
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

// Deleting says whether the request is for a CR being deleted (prepared.deleting).
func Deleting(c Call) bool {
	d, _, _ := unstructured.NestedBool(c.Body, "prepared", "deleting")
	return d
}

// Response is what the loopback reconciler answers.
type Response = reconcilertest.Response

// JSONResponse is a 200 answer with v as its body.
func JSONResponse(v any) Response { return reconcilertest.JSON(v) }

// Endpoint is internal/reconcilertest's scripted reconciler, every request checked against
// the published PreparedRequest schema, with the arrivals in order for tests that read
// them one by one (Next, NextMatching). Its record of calls and of overlapping calls for
// one key is the embedded Endpoint's.
type Endpoint struct {
	*reconcilertest.Endpoint
	arrived chan Call
	// overflowed is set when a call found arrived full: a test that reads arrivals in order
	// would miss one, so Next fails; a test that never reads them (the soak) is not blocked.
	overflowed atomic.Bool
	mu         sync.Mutex
	respond    func(Call) Response
}

// NewEndpoint starts an Endpoint answering with respond; it stops when the test ends.
func NewEndpoint(t testing.TB, respond func(Call) Response) *Endpoint {
	ep := &Endpoint{arrived: make(chan Call, 1000), respond: respond}
	ep.Endpoint = reconcilertest.NewEndpoint(t, func(rc reconcilertest.Call) reconcilertest.Response {
		c := Call{rc}
		ep.mu.Lock()
		respond := ep.respond
		ep.mu.Unlock()
		select {
		case ep.arrived <- c:
		default:
			ep.overflowed.Store(true)
		}
		return respond(c)
	}, reconcilertest.EndpointOptions{Check: checkPrepared})
	return ep
}

// checkPrepared checks a request ork sent against schema/prepared-request.schema.json.
func checkPrepared(raw []byte) error {
	v, err := wire()
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if err := v.ValidatePreparedRequest(raw); err != nil {
		return fmt.Errorf("ork sent a request that breaks schema/prepared-request.schema.json: %w", err)
	}
	return nil
}

// Recorded is every call so far, in order of arrival.
func (ep *Endpoint) Recorded() []Call {
	var out []Call
	for _, rc := range ep.Calls() {
		out = append(out, Call{rc})
	}
	return out
}

// Arrived delivers the calls in order of arrival, for a test that watches them itself.
func (ep *Endpoint) Arrived() <-chan Call { return ep.arrived }

// CheckOverflow fails the test when a request was dropped because too many were unread:
// a test reading them in order would miss it.
func (ep *Endpoint) CheckOverflow(t testing.TB) {
	t.Helper()
	if ep.overflowed.Load() {
		t.Fatalf("more than %d requests arrived unread: the order of arrivals is lost", cap(ep.arrived))
	}
}

// SetRespond replaces the answer for the calls that arrive from now on.
func (ep *Endpoint) SetRespond(f func(Call) Response) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.respond = f
}

// Next waits for the next request (bounded: a reconcile takes milliseconds here, 30 s
// means ork never called).
func (ep *Endpoint) Next(t testing.TB) Call {
	t.Helper()
	ep.CheckOverflow(t)
	select {
	case c := <-ep.arrived:
		ep.CheckOverflow(t) // a request dropped while this one was read
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no request reached the reconciler within 30s")
		return Call{}
	}
}

// NextMatching skips requests until one satisfies ok.
func (ep *Endpoint) NextMatching(t testing.TB, what string, ok func(Call) bool) Call {
	t.Helper()
	ep.CheckOverflow(t)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c := <-ep.arrived:
			ep.CheckOverflow(t)
			if ok(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("no request %s within 30s", what)
			return Call{}
		}
	}
}

// OKWithChildren is the everyday answer: a Deployment and a Service named after the CR.
func OKWithChildren(c Call) Response {
	name := c.CRName()
	return JSONResponse(map[string]any{
		"result": "ok",
		"status": map[string]any{"phase": "Ready", "seenTrigger": c.Trigger},
		"resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": "nginx:1.27", "replicas": 2, "port": 8080}},
			map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
		},
	})
}

// CallsFor is the calls so far for the CR name, in order of arrival.
func (ep *Endpoint) CallsFor(name string) []Call {
	var out []Call
	for _, c := range ep.Recorded() {
		if c.CRName() == name {
			out = append(out, c)
		}
	}
	return out
}
