package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orkspace/ork/internal/exchange"
)

// Reconcile POSTs the PreparedRequest of req and decodes the answer. The whole call, secret
// reads included, is bounded by the CRD's timeout. On success it returns the Result and a
// nil error. On failure the error is a *CallError; for an "error" result the decoded Result
// is returned too (its Status must not be written). Hand both to Decide.
func (r *Reconciler) Reconcile(ctx context.Context, req Request) (*Result, error) {
	res, _, err := r.Call(ctx, req)
	return res, err
}

// Call is Reconcile that also returns the exchange, the one Options.Record gets: the zero
// Exchange (zero Time) when no request was sent because a template or a secret failed first.
func (r *Reconciler) Call(ctx context.Context, req Request) (*Result, exchange.Exchange, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	body, err := r.buildBody(req)
	if err != nil {
		return nil, exchange.Exchange{}, callErr(KindRender, err, "%v", err)
	}
	raw, err := r.endpoint.render(req.Object)
	if err != nil {
		return nil, exchange.Exchange{}, callErr(KindRender, err, "render endpoint: %v", err)
	}
	endpoint, err := parseEndpoint(raw)
	if err != nil {
		return nil, exchange.Exchange{}, callErr(KindRender, err, "render endpoint: %v", err)
	}
	// Before anything else is read (the CA, the token): a held call sends nothing, so it
	// needs nothing, and cannot fail for want of it.
	if wait := r.paused.remaining(endpoint, r.now()); wait > 0 {
		// Another key's answer asked this server to wait: nothing is sent until then.
		return nil, exchange.Exchange{}, &CallError{Kind: KindPaused, RetryAfter: wait,
			Message: fmt.Sprintf("POST %s: not sent: the endpoint asked to wait (Retry-After) for %s more", redactURL(endpoint), wait.Round(time.Millisecond))}
	}
	client, err := r.client(ctx, req.Object)
	if err != nil {
		return nil, exchange.Exchange{}, contextErr(parent, ctx, err)
	}
	var header, token string
	if r.auth != nil {
		if header, token, err = r.authHeader(ctx, req.Object); err != nil {
			return nil, exchange.Exchange{}, contextErr(parent, ctx, err)
		}
	}
	if req.Hold != nil {
		if err := req.Hold(); err != nil {
			return nil, exchange.Exchange{}, err
		}
	}
	x := exchange.Exchange{Key: req.Key, Trigger: string(req.Trigger), Attempt: req.Attempt, URL: redactURL(endpoint), Request: body}
	res, err := r.post(parent, ctx, client, endpoint, body, header, token, &x)
	var ce *CallError
	if errors.As(err, &ce) {
		ce.Message = scrub(ce.Message, token)
	}
	if x.Time.IsZero() {
		return res, exchange.Exchange{}, err
	}
	if token != "" && bytes.Contains(x.Response, []byte(token)) {
		x.Response = bytes.ReplaceAll(x.Response, []byte(token), []byte(redacted))
	}
	o := Decide(res, err)
	x.Outcome = exchange.Outcome{Action: o.Action.String(), After: o.After, Success: o.Success, Reason: o.Reason, Message: o.Message}
	if r.record != nil {
		r.record(x)
	}
	return res, x, err
}

// ReconcilerVersion is the version the reconciler named in x's response header
// ReconcilerVersionHeader, cut to maxVersion bytes: "" when it named none. A status field
// and a log line carry it, so an endpoint cannot make either large.
func ReconcilerVersion(x exchange.Exchange) string {
	v := strings.TrimSpace(x.ResponseHeader.Get(ReconcilerVersionHeader))
	if len(v) > maxVersion {
		v = v[:maxVersion]
	}
	return v
}

// maxVersion bounds a reconciler's version as ork records it.
const maxVersion = 64

// RenderArgs renders the CRD's args against obj, as the request sends them: what the
// decision's inputs digest covers of them.
func (r *Reconciler) RenderArgs(obj map[string]any) (any, error) { return r.args(obj) }

// contextErr classifies a secret read cut short by the deadline or by cancellation as a
// timeout or cancellation, keeping its message (no request was sent).
func contextErr(parent, ctx context.Context, err error) error {
	var ce *CallError
	if ctx.Err() == nil || !errors.As(err, &ce) {
		return err
	}
	ce.Kind = KindTimeout
	if errors.Is(parent.Err(), context.Canceled) {
		ce.Kind = KindCanceled
	}
	return ce
}

// post sends the request and decodes the answer, filling x with what went over the wire.
func (r *Reconciler) post(parent, ctx context.Context, client *http.Client, u *url.URL, body []byte, header, token string, x *exchange.Exchange) (*Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, callErr(KindRender, err, "POST %s: %v", redactURL(u), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", r.userAgent)
	req.Header.Set(ContractVersionHeader, ContractVersion)
	// Reconciles are idempotent by contract: the key lets Go's transport send the request
	// again on a fresh connection when the endpoint had closed the reused keep-alive one
	// (Node, Python and gunicorn servers close idle ones after a few seconds), instead of
	// failing the reconcile.
	req.Header.Set("Idempotency-Key", idempotencyKey())
	if header != "" {
		req.Header.Set(r.auth.header, header)
	}

	start := r.now()
	x.Time = start
	x.RequestHeader = req.Header.Clone()
	if header != "" {
		x.RequestHeader.Del(r.auth.header)
	}
	resp, err := client.Do(req)
	if err != nil {
		ce := r.transportErr(parent, ctx, u, err)
		x.Duration = r.observed(ce, 0, start)
		return nil, ce
	}
	defer resp.Body.Close()
	x.StatusCode = resp.StatusCode
	x.ResponseHeader = http.Header{}
	for _, k := range []string{"Content-Type", "Retry-After", ReconcilerVersionHeader} {
		if v := resp.Header.Values(k); len(v) > 0 {
			x.ResponseHeader[k] = slices.Clone(v)
		}
	}

	if resp.StatusCode != http.StatusOK {
		ce, head := r.statusErr(u, resp, token)
		r.paused.pause(u, r.now(), ce.RetryAfter)
		x.Response = head
		x.Duration = r.observed(nil, resp.StatusCode, start)
		return nil, ce
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.maxBody+1))
	x.Response = data
	if err != nil {
		ce := r.transportErr(parent, ctx, u, err)
		ce.StatusCode = resp.StatusCode
		x.Duration = r.observed(ce, 0, start)
		return nil, ce
	}
	x.Duration = r.observed(nil, resp.StatusCode, start)
	if int64(len(data)) > r.maxBody {
		return nil, &CallError{Kind: KindTooLarge, StatusCode: resp.StatusCode,
			Message: fmt.Sprintf("POST %s: response body exceeds %s", redactURL(u), formatSize(r.maxBody))}
	}
	res, err := decodeResult(data)
	if res != nil {
		res.Error = scrub(res.Error, token)
	}
	var ce *CallError
	if errors.As(err, &ce) {
		if ce.Kind == KindErrorResult {
			ce.Message = errorResultMessage(res.Error) // cut after the scrub, never before
		}
		ce.StatusCode = resp.StatusCode
		if ce.Kind == KindInvalidJSON {
			ce.Message = fmt.Sprintf("POST %s: %s", redactURL(u), ce.Message)
		}
	}
	return res, err
}

// transportErr classifies a failed round trip or body read; ctx is the call's context and
// parent the caller's, to tell ork's own timeout from a shutdown.
func (r *Reconciler) transportErr(parent, ctx context.Context, u *url.URL, err error) *CallError {
	// url.Error repeats the full URL, query included; the message prints a redacted one.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	at := "POST " + redactURL(u)
	var (
		verr *tls.CertificateVerificationError
		uerr x509.UnknownAuthorityError
		herr x509.HostnameError
	)
	switch {
	case errors.Is(parent.Err(), context.Canceled):
		return callErr(KindCanceled, err, "%s: canceled before the reconciler answered", at)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return callErr(KindTimeout, err, "%s: no response within %s", at, r.timeout)
	case errors.As(err, &verr), errors.As(err, &uerr), errors.As(err, &herr):
		return callErr(KindTLS, err, "%s: %v (trust the endpoint's CA with tls.caFile or tls.caSecretRef)", at, err)
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce
	}
	return callErr(KindNetwork, err, "%s: %v", at, err)
}

// statusErr describes a non-200 response with a short, scrubbed snippet of its body; it
// returns the start of the body it read too.
func (r *Reconciler) statusErr(u *url.URL, resp *http.Response, token string) (*CallError, []byte) {
	head, _ := io.ReadAll(io.LimitReader(resp.Body, snippetRead))
	// Drain a little more so the connection can be reused; a huge error page is not worth it.
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	msg := fmt.Sprintf("POST %s: HTTP %s", redactURL(u), resp.Status)
	if resp.Status == "" {
		msg = fmt.Sprintf("POST %s: HTTP %d", redactURL(u), resp.StatusCode)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		msg += " (check auth.secretRef and auth.header)"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		msg += " (redirects are not followed; point endpoint at the final URL)"
	}
	if s := snippet(head, token); s != "" {
		msg += ": " + strconv.Quote(s)
	}
	ce := &CallError{Kind: KindHTTPStatus, StatusCode: resp.StatusCode, Message: msg}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		ce.RetryAfter = min(parseRetryAfter(resp.Header.Get("Retry-After"), r.now()), maxPause)
	}
	return ce, head
}

// observed reports one HTTP attempt to Options.Observe and returns its duration.
func (r *Reconciler) observed(ce *CallError, status int, start time.Time) time.Duration {
	d := r.now().Sub(start)
	if r.observe == nil {
		return d
	}
	code := strconv.Itoa(status)
	if ce != nil {
		switch ce.Kind {
		case KindTimeout:
			code = "timeout"
		case KindCanceled:
			code = "canceled"
		default:
			code = "error"
		}
	}
	r.observe(code, d)
	return d
}

// idempotencyKey is a random key for one request (and its transparent retries).
func idempotencyKey() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
