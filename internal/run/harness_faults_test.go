package run_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/run/runtest"
)

// apiFaults sits between an in-process engine and the real apiserver: it counts ork's
// requests and injects the faults a test asks for. The apiserver itself stays real.
type apiFaults struct {
	mu sync.Mutex
	// counts by "METHOD path-class" (see class).
	counts map[string]int
	// failStatusWrites answers this many PATCHes of a /status subresource with 500.
	failStatusWrites int
	// watchLag delays the events of watch streams whose path contains watchPath, for
	// objects at a resourceVersion above lagAfter.
	watchLag  time.Duration
	watchPath string
	lagAfter  atomic.Uint64
	// expire: watch streams on exactly this path are cut, and the next watch there is
	// answered 410 Gone (the resourceVersion too old), forcing a relist. Exactly: a
	// substring such as "/apps" would also cut /apis/apps/v1/deployments.
	expire   string
	streams  map[io.Closer]string
	nExpired int
	nCut     int
	// beforeRequest, when set, sees each request before it goes to the apiserver (to let
	// another writer in first). Set it before the engine starts.
	beforeRequest func(*http.Request)
}

func newAPIFaults() *apiFaults {
	return &apiFaults{counts: map[string]int{}, streams: map[io.Closer]string{}}
}

// expireWatches cuts the watches on exactly path and answers the next one 410 Gone.
func (a *apiFaults) expireWatches(path string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expire = path
	for body, p := range a.streams {
		if p == path {
			go body.Close() // Close takes a.mu to leave the set
			a.nCut++
		}
	}
}

// cut counts the watch streams expireWatches closed.
func (a *apiFaults) cut() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nCut
}

// expired counts the watches answered 410 Gone.
func (a *apiFaults) expired() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nExpired
}

// expiredWatch is the answer of a watch whose resourceVersion is too old.
func expiredWatch(req *http.Request) *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",` +
			`"status":"Failure","message":"too old resource version","reason":"Expired","code":410}}` + "\n")),
	}
}

// config returns a copy of cfg whose requests go through a.
func (a *apiFaults) config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) { return a.roundTrip(rt, req) })
	})
	return out
}

func (a *apiFaults) roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	a.mu.Lock()
	a.counts[req.Method+" "+class(req)]++
	fail := req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/status") && a.failStatusWrites > 0
	if fail {
		a.failStatusWrites--
	}
	lag := time.Duration(0)
	watch := req.URL.Query().Get("watch") == "true"
	if watch && a.watchPath != "" && strings.Contains(req.URL.Path, a.watchPath) {
		lag = a.watchLag
	}
	if watch && a.expire != "" && req.URL.Path == a.expire {
		a.expire = ""
		a.nExpired++
		a.mu.Unlock()
		return expiredWatch(req), nil
	}
	a.mu.Unlock()
	if a.beforeRequest != nil {
		a.beforeRequest(req)
	}
	if fail {
		return &http.Response{
			StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error", Request: req,
			Header: http.Header{"Content-Type": []string{"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure",` +
				`"message":"injected: etcd is busy","reason":"InternalError","code":500}`)),
		}, nil
	}
	res, err := rt.RoundTrip(req)
	if err == nil && watch {
		// A stream leaves the set when closed: cut() counts open ones only.
		body := &trackedBody{ReadCloser: res.Body}
		body.closed = func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			delete(a.streams, body)
		}
		res.Body = body
		a.mu.Lock()
		a.streams[body] = req.URL.Path
		a.mu.Unlock()
	}
	if err != nil || lag == 0 {
		return res, err
	}
	res.Body = newLaggingBody(res.Body, lag, a.lagAfter.Load)
	return res, nil
}

func (a *apiFaults) count(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[key]
}

// class names a request path: "discovery" for the discovery documents, else the path.
func class(req *http.Request) string {
	p := req.URL.Path
	parts := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case p == "/api" || p == "/apis":
		return "discovery"
	case parts[0] == "api" && len(parts) == 2, parts[0] == "apis" && len(parts) <= 3:
		return "discovery"
	}
	return p
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// laggingBody delivers the watch events of a stream in order, each one whose object's
// resourceVersion is newer than after only lag after it arrived: a watch that falls behind
// from a given write on, as a loaded apiserver's does.
type laggingBody struct {
	io.ReadCloser
	pr *io.PipeReader
}

func newLaggingBody(body io.ReadCloser, lag time.Duration, after func() uint64) io.ReadCloser {
	type event struct {
		line []byte
		at   time.Time
	}
	pr, pw := io.Pipe()
	events := make(chan event, 4096)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := append(append([]byte(nil), sc.Bytes()...), '\n')
			at := time.Now()
			var ev struct {
				Object struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				} `json:"object"`
			}
			_ = json.Unmarshal(line, &ev)
			if rv, err := strconv.ParseUint(ev.Object.Metadata.ResourceVersion, 10, 64); err == nil && rv > after() {
				at = at.Add(lag)
			}
			events <- event{line, at}
		}
	}()
	go func() {
		for ev := range events { // in order: a late event holds back the ones after it
			<-time.After(time.Until(ev.at))
			if _, err := pw.Write(ev.line); err != nil {
				break
			}
		}
		pw.Close()
	}()
	return &laggingBody{ReadCloser: body, pr: pr}
}
func (l *laggingBody) Read(p []byte) (int, error) { return l.pr.Read(p) }

func (l *laggingBody) Close() error {
	l.pr.Close()
	return l.ReadCloser.Close()
}

// restConfigVia is the admin config, sent through proxy (the apiserver's certificate names
// 127.0.0.1, whatever the port).
func restConfigVia(p *runtest.TCPProxy) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + p.Addr()
	return cfg
}

// trackedBody is a watch stream that tells apiFaults when it is closed.
type trackedBody struct {
	io.ReadCloser
	once   sync.Once
	closed func()
}

func (b *trackedBody) Close() error {
	b.once.Do(b.closed)
	return b.ReadCloser.Close()
}
