package opcallback

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Path is the pattern the handler serves; a callback URL is the configured base URL with
// "/operations/" and the token appended.
const Path = "POST /operations/{token}"

// MaxBody bounds a callback's body: five short fields.
const MaxBody = 4 << 10

// maxToken bounds the token in the path: a valid one is 43 characters.
const maxToken = 64

// retryAfter is what a replica that does not hold the custom resource asks the caller to
// wait before it retries (through the Service, it may reach the holder then).
const retryAfter = time.Second

// Results of a callback, the result label of ork_operation_callbacks_total.
const (
	ResultAccepted    = "accepted"    // 202: the custom resource is queued
	ResultBadRequest  = "badRequest"  // 400: no token or body of the expected form
	ResultForged      = "forged"      // 403: the token does not sign the body
	ResultNotFound    = "notFound"    // 404: no such custom resource in the cache
	ResultNotHeld     = "notHeld"     // 403: another object, or the operation is not held (ended, replaced)
	ResultNotOwner    = "notOwner"    // 503: another replica holds the custom resource
	ResultUnavailable = "unavailable" // 503: the key could not be read, or the wake failed
)

// Held is what a custom resource holds now, as the cache shows it: its uid, and the
// operation ork holds for it (ID "" when none).
type Held struct {
	UID        types.UID
	Generation int64
	ID         string
}

// Deps are what the handler needs of the engine.
type Deps struct {
	// Key reads the HMAC key (a Secret's key, through the engine's Secret cache).
	Key func(ctx context.Context) ([]byte, error)
	// Owns reports whether this replica passes the custom resource of uid now: it holds its
	// bucket (sharded), or leads.
	Owns func(uid types.UID) bool
	// Find is what the custom resource namespace/name of uid holds; ok is false when the
	// cache has no object of that name.
	Find func(namespace, name string, uid types.UID) (h Held, ok bool)
	// Wake queues the custom resource in the fast lane, to be passed (and its reconciler
	// called) now rather than at its next poll.
	Wake func(namespace, name string, uid types.UID) error
	// Count counts each callback by result (ork_operation_callbacks_total).
	Count func(result string)
	// Log receives one line per callback; never the token.
	Log *slog.Logger
}

// Body is a callback's body: the operation it reports done.
type Body struct {
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
	Generation int64     `json:"generation"`
	ID         string    `json:"id"`
}

// Handler serves Path with d.
func Handler(d Deps) http.Handler {
	m := http.NewServeMux()
	m.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		result, code := serve(r, d)
		d.Count(result)
		if code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
		}
		w.WriteHeader(code)
	})
	return m
}

// serve checks a callback and wakes its custom resource: the token first, so that a caller
// without one learns nothing of the cluster and touches nothing.
func serve(r *http.Request, d Deps) (result string, code int) {
	token := r.PathValue("token")
	if token == "" || len(token) > maxToken {
		return ResultBadRequest, http.StatusBadRequest
	}
	var b Body
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, MaxBody))
	if err := dec.Decode(&b); err != nil || dec.Decode(&struct{}{}) != io.EOF ||
		b.Name == "" || b.UID == "" || b.ID == "" || b.Generation < 0 {
		return ResultBadRequest, http.StatusBadRequest
	}
	key, err := d.Key(r.Context())
	if err != nil {
		d.Log.Warn("operation callback: read the key", "err", err)
		return ResultUnavailable, http.StatusServiceUnavailable
	}
	if !Valid(key, token, b.UID, b.Generation, b.ID) {
		d.Log.Info("operation callback refused: the token does not sign it", "namespace", b.Namespace, "name", b.Name)
		return ResultForged, http.StatusForbidden
	}
	if !d.Owns(b.UID) {
		return ResultNotOwner, http.StatusServiceUnavailable
	}
	h, ok := d.Find(b.Namespace, b.Name, b.UID)
	if !ok {
		return ResultNotFound, http.StatusNotFound
	}
	if h.UID != b.UID || h.ID != b.ID || h.Generation != b.Generation {
		d.Log.Info("operation callback refused: the operation is not held", "namespace", b.Namespace, "name", b.Name, "operation", b.ID)
		return ResultNotHeld, http.StatusForbidden
	}
	if err := d.Wake(b.Namespace, b.Name, b.UID); err != nil {
		d.Log.Warn("operation callback: wake", "namespace", b.Namespace, "name", b.Name, "err", err)
		return ResultUnavailable, http.StatusServiceUnavailable
	}
	d.Log.Info("operation callback: polling now", "namespace", b.Namespace, "name", b.Name, "operation", b.ID)
	return ResultAccepted, http.StatusAccepted
}
