package reconcilertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Call is one request the Endpoint received, as it recorded it.
type Call struct {
	// Ctx ends when the caller gives up on the request (its timeout) or the test ends.
	Ctx    context.Context
	Header http.Header
	// Raw is the request body; Body is it decoded.
	Raw  []byte
	Body map[string]any
	// Key is the request object's namespace/name (its name when cluster-scoped).
	Key string
	// Trigger is the request's prepared.trigger: why ork called.
	Trigger string
	// Seq is the call's place in the order of arrival, from 0.
	Seq int
	// Start is when the request arrived; End is when the answer began to be written (zero
	// while the call is in flight). End is taken before the answer is written, so that a
	// caller that acts on the answer cannot start its next call before End.
	Start, End time.Time
}

// Response is what the Endpoint answers.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
}

// JSON is a 200 answer with v as its body.
func JSON(v any) Response {
	b, err := json.Marshal(v)
	if err != nil {
		return Response{Status: http.StatusInternalServerError, Body: []byte(err.Error())}
	}
	return Response{Status: http.StatusOK, Body: b}
}

// Overlap is two calls for one key in flight at the same time: Second arrived while First
// had not been answered. A reconciler must never see this for one key.
type Overlap struct {
	Key           string
	First, Second Call
}

// EndpointOptions configure an Endpoint. The zero value checks nothing beyond JSON.
type EndpointOptions struct {
	// Check validates each request body (ork's published request schema, say); an error
	// fails the test. Default: none.
	Check func(raw []byte) error
}

// Endpoint is a real HTTP reconciler on loopback whose answers the test scripts. It
// records every call (trigger, key, start, end) and every overlap of two calls for one key.
type Endpoint struct {
	srv      *httptest.Server
	mu       sync.Mutex
	calls    []Call
	inFlight map[string][]int // key -> Seq of the calls not yet answered
	overlaps [][2]int         // Seq pairs: first, second
	respond  func(Call) Response
}

// NewEndpoint starts an Endpoint answering with respond; it stops when the test ends.
func NewEndpoint(t testing.TB, respond func(Call) Response, o EndpointOptions) *Endpoint {
	e := &Endpoint{respond: respond, inFlight: map[string][]int{}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := Call{Ctx: r.Context(), Header: r.Header.Clone(), Raw: raw, Start: time.Now()}
		if err := json.Unmarshal(raw, &c.Body); err != nil {
			t.Errorf("the reconciler got a body that is not JSON: %v", err)
		}
		if o.Check != nil {
			if err := o.Check(raw); err != nil {
				t.Errorf("the reconciler got a request that fails its check: %v\n%s", err, raw)
			}
		}
		c.Key, c.Trigger = keyOf(c.Body), triggerOf(c.Body)
		c, respond := e.arrive(c)
		res := respond(c)
		e.finish(c)
		for k, v := range res.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.Status)
		_, _ = w.Write(res.Body)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// arrive records c and any call for its key still in flight; it returns c with its Seq and
// the answer function of the moment.
func (e *Endpoint) arrive(c Call) (Call, func(Call) Response) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c.Seq = len(e.calls)
	for _, first := range e.inFlight[c.Key] {
		e.overlaps = append(e.overlaps, [2]int{first, c.Seq})
	}
	e.inFlight[c.Key] = append(e.inFlight[c.Key], c.Seq)
	e.calls = append(e.calls, c)
	return c, e.respond
}

// finish records the end of c: its answer is about to be written.
func (e *Endpoint) finish(c Call) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls[c.Seq].End = time.Now()
	seqs := e.inFlight[c.Key]
	for i, s := range seqs {
		if s == c.Seq {
			e.inFlight[c.Key] = append(seqs[:i:i], seqs[i+1:]...)
			break
		}
	}
	if len(e.inFlight[c.Key]) == 0 {
		delete(e.inFlight, c.Key)
	}
}

// URL is the endpoint's address.
func (e *Endpoint) URL() string { return e.srv.URL }

// Server is the endpoint's server, for tests that stop it early (calls then fail as with a
// reconciler that went away) or reach its URL as a field.
func (e *Endpoint) Server() *httptest.Server { return e.srv }

// SetRespond replaces the answer function for the calls that arrive from now on.
func (e *Endpoint) SetRespond(f func(Call) Response) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.respond = f
}

// Calls is every call so far, in order of arrival, with End set for those answered.
func (e *Endpoint) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Call(nil), e.calls...)
}

// Overlaps is every pair of calls for one key that were in flight together, in the order
// the second of each arrived; none when the caller serialises calls per key.
func (e *Endpoint) Overlaps() []Overlap {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Overlap, 0, len(e.overlaps))
	for _, p := range e.overlaps {
		out = append(out, Overlap{Key: e.calls[p[0]].Key, First: e.calls[p[0]], Second: e.calls[p[1]]})
	}
	return out
}

// keyOf is namespace/name of the request's object, or its name when it has no namespace.
func keyOf(body map[string]any) string {
	o, _ := body["object"].(map[string]any)
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		return ns + "/" + name
	}
	return name
}

// triggerOf is the request's prepared.trigger.
func triggerOf(body map[string]any) string {
	p, _ := body["prepared"].(map[string]any)
	s, _ := p["trigger"].(string)
	return s
}
