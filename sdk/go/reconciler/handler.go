package reconciler

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
)

// Func reconciles one custom resource: it returns the answer, or an error that is answered
// as Error(err). ctx ends when ork gives up on the call or the server shuts down.
type Func func(ctx context.Context, req *PreparedRequest) (Result, error)

// Defaults of HandlerOptions.
const (
	DefaultPath         = "/reconcile"
	DefaultHealthPath   = "/healthz"
	DefaultAuthHeader   = "Authorization"
	DefaultMaxBodyBytes = 16 << 20
	// ContractVersionHeader is the header in which ork sends its contract version and the
	// handler answers with ContractVersion.
	ContractVersionHeader = "Ork-Contract-Version"
)

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// TokenFile is the file that holds the token ork sends (the Secret of the Katalog's
	// auth.secretRef, mounted); it is read on every request, so a rotated Secret is used
	// without a restart. Required unless NoAuth.
	TokenFile string
	// NoAuth accepts requests without a token; default false. Only for tests and loopback.
	NoAuth bool
	// AuthHeader is the Katalog's auth.header; default "Authorization", which carries
	// "Bearer <token>". Any other header carries the bare token, as ork sends it.
	AuthHeader string
	// Path is where ork POSTs; default "/reconcile".
	Path string
	// HealthPath answers GET with 200 "ok"; default "/healthz".
	HealthPath string
	// MaxBodyBytes limits a request body; a larger one is answered 413. Default 16 MiB.
	MaxBodyBytes int64
	// Logger receives what the handler cannot tell ork (an unreadable token file, a panic,
	// a failed write); default: discarded.
	Logger *slog.Logger
	// OnContractMismatch is called with ork's Ork-Contract-Version when its major version
	// differs from ContractVersion's: ork speaks a contract this SDK was not built for.
	// Default nil: the request is served anyway.
	OnContractMismatch func(orkVersion string)
}

// Handler serves a Func to ork. It is safe for concurrent use.
type Handler struct {
	fn   Func
	opts HandlerOptions
	mux  *http.ServeMux
}

// NewHandler serves fn with opts; it fails when no token file is named and NoAuth is off.
func NewHandler(fn Func, opts HandlerOptions) (*Handler, error) {
	if fn == nil {
		return nil, errors.New("reconciler: no Func")
	}
	if opts.TokenFile == "" && !opts.NoAuth {
		return nil, errors.New("reconciler: no TokenFile (set NoAuth to accept requests without a token)")
	}
	if opts.AuthHeader == "" {
		opts.AuthHeader = DefaultAuthHeader
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	if opts.HealthPath == "" {
		opts.HealthPath = DefaultHealthPath
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{fn: fn, opts: opts, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST "+opts.Path, h.reconcile)
	h.mux.HandleFunc("GET "+opts.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	return h, nil
}

// ServeHTTP routes POST Path to the Func and GET HealthPath to the health answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) reconcile(w http.ResponseWriter, r *http.Request) {
	if status, err := h.authorize(r); err != nil {
		if status == http.StatusInternalServerError {
			h.opts.Logger.Error("reconciler: token", "err", err)
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	if v := r.Header.Get(ContractVersionHeader); v != "" && Major(v) != Major(ContractVersion) && h.opts.OnContractMismatch != nil {
		h.opts.OnContractMismatch(v)
	}
	var req PreparedRequest
	body := http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body over %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "not a PreparedRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	res := h.call(r.Context(), &req)
	if err := res.Validate(); err != nil {
		res = Errorf("the reconciler's answer is invalid: %v", err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		data, _ = json.Marshal(Errorf("the reconciler's answer does not encode: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(ContractVersionHeader, ContractVersion)
	if _, err := w.Write(append(data, '\n')); err != nil {
		h.opts.Logger.Warn("reconciler: write answer", "key", req.Key, "err", err)
	}
}

// call runs the Func; a panic is answered as an error result (and logged), so that ork
// retries with backoff and the process keeps serving other keys.
func (h *Handler) call(ctx context.Context, req *PreparedRequest) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			h.opts.Logger.Error("reconciler: panic", "key", req.Key, "panic", p)
			res = Errorf("the reconciler panicked reconciling %s", req.Key)
		}
	}()
	res, err := h.fn(ctx, req)
	if err != nil {
		return Error(err)
	}
	return res
}

// authorize compares the request's token with the token file's in constant time. The file
// is read on every request: a rotated Secret needs no restart.
func (h *Handler) authorize(r *http.Request) (int, error) {
	if h.opts.NoAuth {
		return 0, nil
	}
	data, err := os.ReadFile(h.opts.TokenFile)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return http.StatusInternalServerError, fmt.Errorf("token file %s is empty", h.opts.TokenFile)
	}
	want := token
	if http.CanonicalHeaderKey(h.opts.AuthHeader) == DefaultAuthHeader {
		want = "Bearer " + token
	}
	got := r.Header.Get(h.opts.AuthHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return http.StatusUnauthorized, errors.New("wrong token")
	}
	return 0, nil
}
