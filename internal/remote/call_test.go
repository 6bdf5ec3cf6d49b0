package remote

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
)

// observed collects Options.Observe calls.
type observed struct {
	mu    sync.Mutex
	codes []string
}

func (o *observed) observe(code string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d < 0 {
		code += "(negative duration)"
	}
	o.codes = append(o.codes, code)
}

func (o *observed) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.codes...)
}

func TestSuccessfulResults(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *Result
		out  Outcome
	}{
		{
			name: "ok with status and resources; integers stay int64",
			body: `{"result":"ok","requeueAfter":"","error":"","status":{"phase":"Ready","replicas":2},
				"resources":[{"type":"deployment","fields":{"name":"w","image":"nginx","replicas":2,"cpu":0.5}}]}`,
			want: &Result{Result: "ok", Status: map[string]any{"phase": "Ready", "replicas": int64(2)},
				Resources: []map[string]any{{"type": "deployment", "fields": map[string]any{"name": "w", "image": "nginx", "replicas": int64(2), "cpu": 0.5}}}},
			out: Outcome{Action: Done, Success: true, Reason: ReasonReconcileSucceeded, Message: "remote reconciler returned ok"},
		},
		{
			name: "empty result is ok", body: ` {} `,
			want: &Result{},
			out:  Outcome{Action: Done, Success: true, Reason: ReasonReconcileSucceeded, Message: "remote reconciler returned ok"},
		},
		{
			name: "ok with requeueAfter", body: `{"result":"ok","requeueAfter":"500ms"}`,
			want: &Result{Result: "ok", RequeueAfter: 500 * time.Millisecond},
			out: Outcome{Action: RequeueAfter, After: 500 * time.Millisecond, Success: true, Reason: ReasonReconcileSucceeded,
				Message: "remote reconciler returned ok (requeue after 500ms)"},
		},
		{
			name: "requeue after 1s", body: `{"result":"requeue","requeueAfter":"1s"}`,
			want: &Result{Result: "requeue", RequeueAfter: time.Second},
			out: Outcome{Action: RequeueAfter, After: time.Second, Success: true, Reason: ReasonReconcileSucceeded,
				Message: "remote reconciler returned requeue (requeue after 1s)"},
		},
		{
			// prune tells them apart: absent is "no opinion", an empty list "own nothing".
			name: "resources present and empty: an empty list, not nil", body: `{"result":"ok","resources":[]}`,
			want: &Result{Result: "ok", Resources: []map[string]any{}},
			out:  Outcome{Action: Done, Success: true, Reason: ReasonReconcileSucceeded, Message: "remote reconciler returned ok"},
		},
		{
			name: "requeue without delay: rate-limited re-add", body: `{"result":"requeue","status":null,"resources":null}`,
			want: &Result{Result: "requeue"},
			out:  Outcome{Action: RequeueAfter, Success: true, Reason: ReasonReconcileSucceeded, Message: "remote reconciler returned requeue"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newEndpoint(t, answer(200, tt.body, "Content-Type", "application/json"))
			var obs observed
			r := mustNew(t, crd(srv.URL, nil), Options{Observe: obs.observe})
			res, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, res); d != "" {
				t.Errorf("Result (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.out, Decide(res, err)); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"200"}, obs.get()); d != "" {
				t.Errorf("Observe (-want +got):\n%s", d)
			}
		})
	}
}

func TestFailedResponses(t *testing.T) {
	huge := `{"result":"ok","status":{"pad":"` + strings.Repeat("x", 20<<20) + `"}}`
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		kind     Kind
		status   int
		message  string // substring of the error message
		reason   string
		withBody bool // Reconcile also returns the decoded Result
	}{
		{name: "500", handler: answer(500, "boom\n\tstack trace\x00"), kind: KindHTTPStatus, status: 500,
			message: `HTTP 500 Internal Server Error: "boom stack trace"`, reason: ReasonRemoteHTTPError},
		{name: "404", handler: answer(404, ""), kind: KindHTTPStatus, status: 404,
			message: `HTTP 404 Not Found`, reason: ReasonRemoteHTTPError},
		{name: "401 hints at auth", handler: answer(401, "no"), kind: KindHTTPStatus, status: 401,
			message: `HTTP 401 Unauthorized (check auth.secretRef and auth.header): "no"`, reason: ReasonRemoteHTTPError},
		{name: "redirect not followed", handler: answer(302, "", "Location", "/elsewhere"), kind: KindHTTPStatus, status: 302,
			message: `redirects are not followed`, reason: ReasonRemoteHTTPError},
		{name: "long error page cut", handler: answer(502, strings.Repeat("<p>bad gateway</p>", 100)), kind: KindHTTPStatus, status: 502,
			message: `<p>bad gateway</p><p…"`, reason: ReasonRemoteHTTPError},
		{name: "garbage JSON", handler: answer(200, `{garbage`), kind: KindInvalidJSON, status: 200,
			message: `invalid RemoteReconcileResult: invalid JSON at byte 2: invalid character 'g' looking for beginning of object key string`, reason: ReasonInvalidRemoteResponse},
		{name: "not an object", handler: answer(200, `"ok"`), kind: KindInvalidJSON, status: 200,
			message: `invalid RemoteReconcileResult: body is not a JSON object`, reason: ReasonInvalidRemoteResponse},
		{name: "null", handler: answer(200, `null`), kind: KindInvalidJSON, status: 200,
			message: `body is not a JSON object`, reason: ReasonInvalidRemoteResponse},
		{name: "empty body", handler: answer(200, ``), kind: KindInvalidJSON, status: 200,
			message: `empty body, want a JSON RemoteReconcileResult`, reason: ReasonInvalidRemoteResponse},
		{name: "unknown field", handler: answer(200, `{"result":"ok","requeue_after":"1s"}`), kind: KindInvalidJSON, status: 200,
			message: `unknown field "requeue_after" (a RemoteReconcileResult has result, requeueAfter, error, status, resources, operation)`, reason: ReasonInvalidRemoteResponse},
		{name: "field names are case-sensitive", handler: answer(200, `{"Result":"ok"}`), kind: KindInvalidJSON, status: 200,
			message: `unknown field "Result"`, reason: ReasonInvalidRemoteResponse},
		{name: "duplicate field", handler: answer(200, `{"result":"ok","result":"error"}`), kind: KindInvalidJSON, status: 200,
			message: `duplicate field "result"`, reason: ReasonInvalidRemoteResponse},
		{name: "trailing data", handler: answer(200, `{"result":"ok"}{"result":"ok"}`), kind: KindInvalidJSON, status: 200,
			message: `invalid character '{' after top-level value`, reason: ReasonInvalidRemoteResponse},
		{name: "wrong type", handler: answer(200, `{"result":1}`), kind: KindInvalidJSON, status: 200,
			message: `field "result" is a number, want a string`, reason: ReasonInvalidRemoteResponse},
		{name: "resource not an object", handler: answer(200, `{"resources":[{"type":"service"},"x"]}`), kind: KindInvalidJSON, status: 200,
			message: `resources[1] is a string, want an object`, reason: ReasonInvalidRemoteResponse},
		{name: "20 MiB body", handler: answer(200, huge), kind: KindTooLarge, status: 200,
			message: `response body exceeds 8 MiB`, reason: ReasonRemoteResponseTooLarge},
		{name: "unknown result", handler: answer(200, `{"result":"done"}`), kind: KindUnknownResult, status: 200,
			message: `unknown result "done" (want "ok", "requeue", "pending" or "error")`, reason: ReasonInvalidRemoteResult},
		{name: "invalid requeueAfter", handler: answer(200, `{"result":"requeue","requeueAfter":"soon"}`), kind: KindInvalidResult, status: 200,
			message: `invalid requeueAfter "soon" (want a Go duration such as 30s or 500ms)`, reason: ReasonInvalidRemoteResult},
		{name: "negative requeueAfter", handler: answer(200, `{"result":"ok","requeueAfter":"-1s"}`), kind: KindInvalidResult, status: 200,
			message: `invalid requeueAfter "-1s"`, reason: ReasonInvalidRemoteResult},
		{name: "error result", handler: answer(200, `{"result":"error","error":"database unavailable","status":{"phase":"Broken"}}`),
			kind: KindErrorResult, status: 200, message: `reconciler returned error: database unavailable`, reason: ReasonReconcileError, withBody: true},
		{name: "error result without text", handler: answer(200, `{"result":"error"}`),
			kind: KindErrorResult, status: 200, message: `reconciler returned result "error" without error text`, reason: ReasonReconcileError, withBody: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newEndpoint(t, tt.handler)
			var obs observed
			r := mustNew(t, crd(srv.URL, nil), Options{Observe: obs.observe})
			res, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *CallError", err)
			}
			if ce.Kind != tt.kind || ce.StatusCode != tt.status {
				t.Errorf("Kind, StatusCode = %s, %d; want %s, %d", ce.Kind, ce.StatusCode, tt.kind, tt.status)
			}
			if !strings.Contains(ce.Error(), tt.message) {
				t.Errorf("message = %q\nwant it to contain %q", ce.Error(), tt.message)
			}
			if strings.ContainsAny(ce.Error(), "\n\t\x00") {
				t.Errorf("message is not one clean line: %q", ce.Error())
			}
			if (res != nil) != tt.withBody {
				t.Errorf("Result = %+v, want one: %v", res, tt.withBody)
			}
			o := Decide(res, err)
			if o.Action != Backoff || o.Success || o.Reason != tt.reason || o.Message != ce.Error() {
				t.Errorf("Decide = %+v, want Backoff with reason %s", o, tt.reason)
			}
			if d := cmp.Diff([]string{"200"}, obs.get()); tt.status == 200 && d != "" {
				t.Errorf("Observe (-want +got):\n%s", d)
			}
		})
	}
}

func TestErrorResultKeepsItsStatusForTheEngineToDrop(t *testing.T) {
	srv, _ := newEndpoint(t, answer(200, `{"result":"error","error":"nope","status":{"phase":"Broken"}}`))
	r := mustNew(t, crd(srv.URL, nil), Options{})
	res, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
	if err == nil || res == nil {
		t.Fatalf("Reconcile = %+v, %v; want both", res, err)
	}
	if res.Error != "nope" || res.Status["phase"] != "Broken" {
		t.Errorf("Result = %+v", res)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		select { // blocks until the test ends or ork hangs up
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close, which waits for the handler
	var obs observed
	r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) { rem.Timeout = "50ms" }), Options{Observe: obs.observe})

	_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTimeout {
		t.Fatalf("err = %v, want KindTimeout", err)
	}
	if want := "POST " + srv.URL + ": no response within 50ms"; ce.Error() != want {
		t.Errorf("message = %q, want %q", ce.Error(), want)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err does not wrap context.DeadlineExceeded: %v", err)
	}
	if o := Decide(nil, err); o.Action != Backoff || o.Reason != ReasonRemoteTimeout {
		t.Errorf("Decide = %+v", o)
	}
	if d := cmp.Diff([]string{"timeout"}, obs.get()); d != "" {
		t.Errorf("Observe (-want +got):\n%s", d)
	}
}

func TestCanceledByTheCaller(t *testing.T) {
	started := make(chan struct{})
	srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	var obs observed
	r := mustNew(t, crd(srv.URL, nil), Options{Observe: obs.observe})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := r.Reconcile(ctx, Request{Key: "default/my-webapp", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindCanceled {
		t.Fatalf("err = %v, want KindCanceled", err)
	}
	if o := Decide(nil, err); o.Reason != ReasonReconcileCanceled {
		t.Errorf("Decide = %+v", o)
	}
	if d := cmp.Diff([]string{"canceled"}, obs.get()); d != "" {
		t.Errorf("Observe (-want +got):\n%s", d)
	}
}

func TestUnreachableEndpointHidesTheQueryString(t *testing.T) {
	srv, _ := newEndpoint(t, answer(200, `{}`))
	url := srv.URL
	srv.Close() // nothing listens on the port any more
	var obs observed
	r := mustNew(t, crd(url+"/reconcile?code=query-s3cret", nil), Options{Observe: obs.observe})
	_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindNetwork {
		t.Fatalf("err = %v, want KindNetwork", err)
	}
	if !strings.HasPrefix(ce.Error(), "POST "+url+"/reconcile?…: ") || strings.Contains(ce.Error(), "query-s3cret") {
		t.Errorf("message = %q", ce.Error())
	}
	if o := Decide(nil, err); o.Reason != ReasonRemoteUnreachable || o.Action != Backoff {
		t.Errorf("Decide = %+v", o)
	}
	if d := cmp.Diff([]string{"error"}, obs.get()); d != "" {
		t.Errorf("Observe (-want +got):\n%s", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		header string
		want   Outcome
	}{
		{name: "429 with seconds", status: 429, header: "2",
			want: Outcome{Action: RetryAfter, After: 2 * time.Second, Reason: ReasonRemoteThrottled}},
		{name: "503 with an HTTP date", status: 503, header: now.Add(90 * time.Second).Format(http.TimeFormat),
			want: Outcome{Action: RetryAfter, After: 90 * time.Second, Reason: ReasonRemoteThrottled}},
		{name: "429 without Retry-After: backoff", status: 429,
			want: Outcome{Action: Backoff, Reason: ReasonRemoteHTTPError}},
		{name: "503 with a past date: backoff", status: 503, header: now.Add(-time.Minute).Format(http.TimeFormat),
			want: Outcome{Action: Backoff, Reason: ReasonRemoteHTTPError}},
		{name: "500 with Retry-After: ignored", status: 500, header: "2",
			want: Outcome{Action: Backoff, Reason: ReasonRemoteHTTPError}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.header != "" {
				headers = []string{"Retry-After", tt.header}
			}
			srv, _ := newEndpoint(t, answer(tt.status, "slow down", headers...))
			r := mustNew(t, crd(srv.URL, nil), Options{Now: func() time.Time { return now }})
			_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			var ce *CallError
			if !errors.As(err, &ce) || ce.StatusCode != tt.status || ce.RetryAfter != tt.want.After {
				t.Fatalf("err = %#v, want status %d, RetryAfter %s", err, tt.status, tt.want.After)
			}
			got := Decide(nil, err)
			got.Message = ""
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		" 7 ":                           7 * time.Second,
		"soon":                          0,
		"1.5":                           0,
		"99999999999999999":             time.Duration(1<<63 - 1),
		"Wed, 04 Mar 2026 05:07:07 GMT": time.Minute,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEndpointTemplate(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
	r := mustNew(t, crd(srv.URL+"/reconcile/{{ .metadata.namespace }}/{{ .metadata.name }}", nil), Options{})
	if _, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()}); err != nil {
		t.Fatal(err)
	}
	if got := next(t, reqs).path; got != "/reconcile/default/my-webapp" {
		t.Errorf("path = %q", got)
	}
}

func TestRenderFailuresSendNothing(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		args     map[string]any
		auth     *katalog.SecretKeyRef
		message  string
	}{
		// A field the custom resource lacks is said in words, with the index hint, as in a
		// declarative template: never Go's "map has no entry for key".
		{name: "endpoint reads a missing field", endpoint: "{{ .spec.url }}",
			message: `render endpoint: template reads .spec.url, which the custom resource lacks (outside remote.args a missing field fails the render; read an optional one with {{ index .spec "url" | default "…" }})`},
		{name: "endpoint reads a missing nested field", endpoint: "http://{{ .spec.backend.host }}/",
			message: `render endpoint: template reads .spec.backend, which the custom resource lacks (outside remote.args a missing field fails the render; read an optional one with {{ index .spec "backend" | default "…" }})`},
		{name: "auth secret name reads a missing field", endpoint: "http://127.0.0.1:1/",
			auth:    &katalog.SecretKeyRef{Name: "{{ .spec.tokenSecret }}", Key: "token"},
			message: `render auth secret name: template reads .spec.tokenSecret, which the custom resource lacks (outside remote.args a missing field fails the render; read an optional one with {{ index .spec "tokenSecret" | default "…" }})`},
		{name: "auth secret namespace reads a missing field", endpoint: "http://127.0.0.1:1/",
			auth:    &katalog.SecretKeyRef{Name: "tok", Namespace: "{{ .metadata.annotations.team }}", Key: "token"},
			message: `render auth secret namespace: template reads .metadata.annotations.team, which the custom resource lacks (outside remote.args a missing field fails the render; read an optional one with {{ index .metadata.annotations "team" | default "…" }})`},
		{name: "endpoint renders to a relative URL", endpoint: "{{ .metadata.name }}/reconcile",
			message: `render endpoint: endpoint "my-webapp/reconcile" is not an absolute http(s) URL`},
		{name: "required arg is missing", endpoint: "http://127.0.0.1:1/", args: map[string]any{"x": map[string]any{"y": `{{ required "spec.nope is required" .spec.nope }}`}},
			message: `render crds.webapp.operatorBox.reconcile.remote.args.x.y: template: crds.webapp.operatorBox.reconcile.remote.args.x.y:1:3: executing "crds.webapp.operatorBox.reconcile.remote.args.x.y" at <required "spec.nope is required" .spec.nope>: error calling required: spec.nope is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obs observed
			r := mustNew(t, crd(tt.endpoint, func(rem *katalog.Remote) {
				rem.Args = tt.args
				if tt.auth != nil {
					rem.Auth = &katalog.Auth{SecretRef: tt.auth}
				}
			}), Options{Observe: obs.observe, Secrets: newSecrets("orkestra-system/tok/token", "t")})
			_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != KindRender {
				t.Fatalf("err = %v, want KindRender", err)
			}
			if ce.Error() != tt.message {
				t.Errorf("message = %q\nwant      %q", ce.Error(), tt.message)
			}
			if o := Decide(nil, err); o.Reason != ReasonTemplateError {
				t.Errorf("Decide = %+v", o)
			}
			if len(obs.get()) != 0 {
				t.Errorf("Observe called without a request: %v", obs.get())
			}
		})
	}
}

func TestMaxBodyBytesOption(t *testing.T) {
	srv, _ := newEndpoint(t, answer(200, `{"result":"ok","status":{"pad":"`+strings.Repeat("x", 1024)+`"}}`))
	r := mustNew(t, crd(srv.URL, nil), Options{MaxBodyBytes: 1 << 10})
	_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTooLarge || !strings.HasSuffix(ce.Error(), "response body exceeds 1 KiB") {
		t.Fatalf("err = %v, want KindTooLarge at 1 KiB", err)
	}
	roomy := mustNew(t, crd(srv.URL, nil), Options{MaxBodyBytes: 1 << 20})
	if _, err := roomy.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp()}); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
}

// losingSecrets is a SecretSource during whose read the caller stops being allowed to call
// (a Lease passing while the token is read).
type losingSecrets struct {
	*secrets
	lost *atomic.Bool
}

func (s losingSecrets) SecretValue(ctx context.Context, namespace, name, key string) ([]byte, error) {
	s.lost.Store(true)
	return s.secrets.SecretValue(ctx, namespace, name, key)
}

// Request.Hold is asked right before the POST goes out, after everything read before it
// (the token here): a refusal that came up meanwhile sends nothing and is returned as is.
func TestHoldIsCheckedRightBeforeTheSend(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
	c := crd(srv.URL, func(r *katalog.Remote) {
		r.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "ops", Key: "token"}}
	})
	var lost atomic.Bool
	r := mustNew(t, c, Options{Secrets: losingSecrets{newSecrets("ops/tok/token", "s3cret"), &lost}})
	errHeld := errors.New("not the leader")
	hold := func() error {
		if lost.Load() {
			return errHeld
		}
		return nil
	}
	_, x, err := r.Call(context.Background(), Request{Key: "default/my-webapp", Object: webapp(), Hold: hold})
	if !errors.Is(err, errHeld) {
		t.Errorf("Call = %v, want the hold's error", err)
	}
	if !x.Time.IsZero() {
		t.Errorf("an exchange was recorded, want none: nothing was sent")
	}
	select {
	case got := <-reqs:
		t.Errorf("the endpoint received %s %s, want nothing sent", got.method, got.path)
	default:
	}
}
