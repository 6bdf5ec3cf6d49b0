// Package exchange records the calls of a remote reconciler (request, response, outcome) as
// one JSON file per call with secrets masked, and replays such a recording in place of the
// endpoint.
package exchange

import (
	"encoding/json"
	"net/http"
	"time"
)

// Exchange is one call of a remote reconciler as it happened, unmasked. The remote client
// hands it to a hook (remote.Options.Record); Recorder masks it before it touches a disk.
type Exchange struct {
	// Time is when the request was sent; Duration runs until the body was read.
	Time     time.Time
	Duration time.Duration
	// Key is the work-queue key ("namespace/name"), Trigger and Attempt the prepared ones.
	Key     string
	Trigger string
	Attempt int
	// URL is the endpoint without user info and query string.
	URL string
	// RequestHeader is what was sent, without the auth header.
	RequestHeader http.Header
	// Request is the PreparedRequest body.
	Request []byte
	// StatusCode is the HTTP status; 0 when no response arrived (timeout, network).
	StatusCode int
	// ResponseHeader holds the response's Content-Type, Retry-After and Ork-Reconciler-Version only.
	ResponseHeader http.Header
	// Response is the body as read (a non-200 body only in part), the token scrubbed.
	Response []byte
	// Outcome is what ork decided from the response (remote.Decide).
	Outcome Outcome
}

// Outcome is remote.Outcome in plain values.
type Outcome struct {
	// Action is "Done", "RequeueAfter", "Backoff" or "RetryAfter".
	Action  string        `json:"action"`
	After   time.Duration `json:"-"`
	Success bool          `json:"success"`
	Reason  string        `json:"reason"`
	Message string        `json:"message"`
}

// Version is the format of the files Recorder writes.
const Version = "ork.exchange/v1"

// Masks put in place of hidden values. Secret data stays valid base64 (of "[REDACTED]") so
// that a replayed Secret still builds.
const (
	Redacted       = "[REDACTED]"
	RedactedBase64 = "W1JFREFDVEVEXQ=="
)

// Entry is one recorded exchange, the content of one file.
type Entry struct {
	Version string `json:"version"`
	// Digest identifies the request for replay: see Digest.
	Digest  string    `json:"digest"`
	Time    time.Time `json:"time"`
	Key     string    `json:"key"`
	Trigger string    `json:"trigger"`
	Attempt int       `json:"attempt"`
	// Duration is a Go duration string ("12.5ms").
	Duration string `json:"duration"`
	// Redact lists the paths masked on top of Secret data; replay masks live requests alike.
	Redact         []string        `json:"redact,omitempty"`
	URL            string          `json:"url"`
	RequestHeader  http.Header     `json:"requestHeader,omitempty"`
	Request        json.RawMessage `json:"request"`
	StatusCode     int             `json:"statusCode"`
	ResponseHeader http.Header     `json:"responseHeader,omitempty"`
	Response       json.RawMessage `json:"response,omitempty"`
	ResponseText   *string         `json:"responseText,omitempty"`
	Outcome        recordOutcome   `json:"outcome"`
}

// recordOutcome is Outcome with After as a duration string.
type recordOutcome struct {
	Outcome
	After string `json:"after,omitempty"`
}
