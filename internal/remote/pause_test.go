package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/katalog"
)

// A 429 with Retry-After silences the endpoint for every key, not only the one
// that got it: nothing is sent until it ends, and each key is told how long is left.
func TestRetryAfterPausesTheWholeEndpoint(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	srv, requests := throttledOnce(t)
	r := mustNew(t, crd(srv.URL, nil), Options{Now: func() time.Time { return now }})
	obj := func(name string) map[string]any {
		o := webapp()
		o["metadata"].(map[string]any)["name"] = name
		return o
	}
	if _, err := r.Reconcile(context.Background(), Request{Key: "default/a", Object: obj("a")}); err == nil {
		t.Fatal("the 429 was not a failure")
	}
	now = now.Add(4 * time.Second)
	_, err := r.Reconcile(context.Background(), Request{Key: "default/b", Object: obj("b")})
	var ce *CallError
	if !errors.As(err, &ce) || ce.RetryAfter != 6*time.Second {
		t.Fatalf("another key during the pause: %v, want a RetryAfter of the 6s left", err)
	}
	if out := Decide(nil, err); out.Action != RetryAfter || out.Reason != ReasonRemoteThrottled {
		t.Errorf("Decide = %+v, want RetryAfter/RemoteThrottled", out)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests reached the server during its pause, want 1", n)
	}
	now = now.Add(6 * time.Second)
	if _, err := r.Reconcile(context.Background(), Request{Key: "default/b", Object: obj("b")}); err != nil {
		t.Errorf("after the pause: %v, want the call sent and answered", err)
	}
}

// One service often reconciles several CRDs at one endpoint. Its Retry-After is about the
// endpoint, so with shared Pauses a 429 answered to one CRD's call holds the other CRD's
// calls to it too (written with the scheme's default port, it is the same endpoint); a CRD at
// another path of the same server, or on another server, is not held.
func TestRetryAfterPausesTheEndpointForEveryCRD(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var requests, otherPath atomic.Int32
	srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/reconcile" {
			otherPath.Add(1)
			_, _ = w.Write([]byte(`{"result":"ok"}`))
			return
		}
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "10")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"result":"ok"}`))
	})
	other, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"result":"ok"}`))
	})
	pauses := NewPauses()
	opts := Options{Now: func() time.Time { return now }, Pauses: pauses}
	webapps := mustNew(t, crd(srv.URL+"/reconcile", nil), opts)
	second := crd(srv.URL+"/./reconcile", nil)
	second.Name = "database"
	second.APITypes = &katalog.APITypes{Group: "myorg.io", Version: "v1", Kind: "Database", Plural: "databases"}
	databases := mustNew(t, second, opts)
	anotherPath := mustNew(t, crd(srv.URL+"/other", nil), opts)
	elsewhere := mustNew(t, crd(other.URL, nil), opts)

	if _, err := webapps.Reconcile(context.Background(), Request{Key: "default/a", Object: webapp()}); err == nil {
		t.Fatal("the 429 was not a failure")
	}
	now = now.Add(4 * time.Second)
	_, err := databases.Reconcile(context.Background(), Request{Key: "default/db", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindPaused || ce.RetryAfter != 6*time.Second {
		t.Fatalf("another CRD's call to the paused endpoint: %v, want paused with the 6s left", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests reached the endpoint during its pause, want 1", n)
	}
	if _, err := anotherPath.Reconcile(context.Background(), Request{Key: "default/a", Object: webapp()}); err != nil {
		t.Errorf("another path of the paused endpoint's server was held: %v", err)
	}
	if n := otherPath.Load(); n != 1 {
		t.Errorf("%d requests reached the other path, want 1", n)
	}
	if _, err := elsewhere.Reconcile(context.Background(), Request{Key: "default/a", Object: webapp()}); err != nil {
		t.Errorf("a CRD on another server was held: %v", err)
	}
}

// The pause's key names one endpoint however its URL is written.
func TestPauseKeyIsTheEndpoint(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://h/reconcile", "http://h:80/reconcile", true},
		{"https://h/reconcile", "https://H:443/reconcile", true},
		{"http://h/a/../reconcile", "http://h/reconcile", true},
		{"http://h", "http://h/", true},
		{"http://h/reconcile?x=1", "http://h/reconcile", true},
		{"http://h/reconcile", "http://h/other", false},
		{"http://h:8080/reconcile", "http://h/reconcile", false},
		{"http://h/reconcile", "https://h/reconcile", false},
		{"http://h/reconcile", "http://g/reconcile", false},
	} {
		a, err := url.Parse(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := url.Parse(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointOf(a) == endpointOf(b); got != tc.same {
			t.Errorf("%s and %s: same endpoint %v (%s, %s), want %v", tc.a, tc.b, got, endpointOf(a), endpointOf(b), tc.same)
		}
	}
}

// throttledOnce is an endpoint that answers its first request 429 with Retry-After: 10 and
// every later one ok; it counts the requests.
func throttledOnce(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "10")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"result":"ok"}`))
	})
	return srv, &requests
}

// A server that closes an idle keep-alive connection as the next request arrives on it (as
// Node, Python and gunicorn servers do after a few idle seconds) costs no failed reconcile:
// the request carries an Idempotency-Key, so Go's transport sends it again on a new
// connection.
func TestClosedKeepAliveConnectionIsRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go serveOneThenClose(c)
		}
	}()
	r := mustNew(t, crd("http://"+ln.Addr().String()+"/reconcile", nil), Options{})
	for i := range 3 {
		if _, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()}); err != nil {
			t.Fatalf("call %d on a server closing idle connections: %v", i+1, err)
		}
	}
	if n := conns.Load(); n < 3 {
		t.Errorf("%d connections, want a new one after each close (the retry went somewhere else?)", n)
	}
}

// serveOneThenClose answers one request with keep-alive, then closes the connection as soon
// as the next request's first bytes arrive, without an answer.
func serveOneThenClose(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	body := `{"result":"ok"}`
	_, _ = req.Body.Read(make([]byte, 1<<20))
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	_, _ = br.ReadString('\n') // the next request on this connection: closed unanswered
}

// A call held by the server's pause reads no Secret: nothing is sent, so the token is not
// needed, and a failing Secret read must not turn a quiet hold into an auth failure. A
// Retry-After beyond the longest pause is reported as that pause.
func TestHeldCallReadsNoSecret(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "86400")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	sec := newSecrets("orkestra-system/tok/token", "s3cr3t")
	r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) {
		rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Key: "token"}}
	}), Options{Secrets: sec, Now: func() time.Time { return now }})
	_, err := r.Reconcile(context.Background(), Request{Key: "default/a", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.RetryAfter != maxPause {
		t.Fatalf("a day's Retry-After: %v, want one of %s (the longest pause)", err, maxPause)
	}
	sec.mu.Lock()
	reads := len(sec.reads)
	sec.mu.Unlock()
	_, err = r.Reconcile(context.Background(), Request{Key: "default/b", Object: webapp()})
	if !errors.As(err, &ce) || ce.Kind != KindPaused {
		t.Fatalf("during the pause: %v, want a held call", err)
	}
	sec.mu.Lock()
	defer sec.mu.Unlock()
	if len(sec.reads) != reads {
		t.Errorf("a held call read Secrets %v, want none", sec.reads[reads:])
	}
}
