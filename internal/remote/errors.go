package remote

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind classifies a failed remote reconcile.
type Kind string

// Kinds of CallError.
const (
	// KindTimeout: no complete response within reconcile.remote.timeout.
	KindTimeout Kind = "Timeout"
	// KindCanceled: the caller's context ended first (ork is shutting down).
	KindCanceled Kind = "Canceled"
	// KindNetwork: the connection could not be made or broke.
	KindNetwork Kind = "Network"
	// KindTLS: the endpoint's certificate did not verify, or the CA could not be loaded.
	KindTLS Kind = "TLS"
	// KindHTTPStatus: a response other than 200.
	KindHTTPStatus Kind = "HTTPStatus"
	// KindInvalidJSON: the 200 body is not a strict RemoteReconcileResult JSON object.
	KindInvalidJSON Kind = "InvalidJSON"
	// KindTooLarge: the 200 body exceeds Options.MaxBodyBytes.
	KindTooLarge Kind = "TooLarge"
	// KindInvalidResult: a well-formed result with an invalid requeueAfter, or a "pending"
	// one whose operation is missing or invalid (or an operation with another result).
	KindInvalidResult Kind = "InvalidResult"
	// KindUnknownResult: result is not "ok", "", "requeue", "pending" or "error".
	KindUnknownResult Kind = "UnknownResult"
	// KindErrorResult: the reconciler answered result "error".
	KindErrorResult Kind = "ErrorResult"
	// KindRender: the endpoint, args or a secret name did not render against the CR.
	KindRender Kind = "Render"
	// KindAuth: the auth token could not be read.
	KindAuth Kind = "Auth"
	// KindPaused: nothing was sent, because the endpoint asked (another key) to wait.
	KindPaused Kind = "Paused"
)

// CallError is a failed remote reconcile. Its message is meant for conditions, events and
// logs: it never contains the auth token, a URL's query string or more than a short,
// sanitized snippet of a response body.
type CallError struct {
	Kind Kind
	// StatusCode is the HTTP status when a response arrived, else 0.
	StatusCode int
	// RetryAfter is the Retry-After of a 429 or 503 response; 0 when absent or not in the
	// future.
	RetryAfter time.Duration
	// Message is the readable description returned by Error.
	Message string
	err     error
}

// Error returns the message.
func (e *CallError) Error() string { return e.Message }

// Unwrap returns the underlying cause, when there is one.
func (e *CallError) Unwrap() error { return e.err }

func callErr(kind Kind, cause error, format string, args ...any) *CallError {
	return &CallError{Kind: kind, Message: fmt.Sprintf(format, args...), err: cause}
}

const (
	redacted = "[REDACTED]"
	// snippetRead is how much of a failed response is read for its snippet, snippetRunes how
	// much of it is shown: enough to recognise an error page, short enough for an Event.
	snippetRead  = 4 << 10
	snippetRunes = 200
	// maxErrorText bounds a reconciler's error text in messages (Event messages are short).
	maxErrorText = 1024
)

// scrub replaces every occurrence of secret in s: as it is, and as JSON encoders write it
// inside a string (a reconciler that echoes the request's header back in a JSON error body
// sends "a\/b" or "\u003c" where the token has "a/b" or "<").
func scrub(s, secret string) string {
	if secret == "" {
		return s
	}
	for _, form := range secretForms(secret) {
		s = strings.ReplaceAll(s, form, redacted)
	}
	return s
}

// secretForms is secret and its JSON-escaped spellings, longest first.
func secretForms(secret string) []string {
	forms := []string{secret}
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, escapeHTML := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		if err := enc.Encode(secret); err != nil {
			continue
		}
		quoted := strings.TrimSuffix(b.String(), "\n")
		inner := quoted[1 : len(quoted)-1]
		add(inner)
		add(strings.ReplaceAll(inner, "/", `\/`))
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// snippet turns the start of a response body into one short printable line. The secret is
// scrubbed before anything is cut, so a truncation cannot leave part of it behind.
func snippet(b []byte, secret string) string {
	s := scrub(strings.ToValidUTF8(string(b), "\uFFFD"), secret)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return truncate(strings.Join(strings.Fields(s), " "), snippetRunes)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// redactURL prints u without user info and query: both are where tokens hide in URLs
// (?code=..., https://user:pass@...).
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.Fragment = ""
	hasQuery := c.RawQuery != ""
	c.RawQuery = ""
	if hasQuery {
		return c.String() + "?…"
	}
	return c.String()
}

// formatSize prints a byte limit the way it is documented: "8 MiB".
func formatSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date. Anything else,
// or a time not in the future, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
