// Package apiwarnings collects the apiserver's warnings (the Warning header) per request,
// through the request's context: a write that wants to know what the apiserver said of it
// (the unknown fields a schema pruned, for one) gets its own, and every other warning goes
// where it went before.
package apiwarnings

import (
	"context"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// key carries a request's collector in its context.
type key struct{}

// Warnings are the apiserver's warnings of the requests made with one context.
type Warnings struct {
	mu    sync.Mutex
	texts []string
}

// Collect returns ctx carrying a fresh collector: the warnings of requests made with it go
// there instead of the log.
func Collect(ctx context.Context) (context.Context, *Warnings) {
	w := &Warnings{}
	return context.WithValue(ctx, key{}, w), w
}

func (w *Warnings) add(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// UnknownFields returns the key of every `unknown field "<prefix>.<key>"` warning: the
// top-level keys of prefix the schema pruned. A deeper path (status.conditions[0].x) names a
// field inside a key the schema keeps: the key itself is not pruned.
func (w *Warnings) UnknownFields(prefix string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	lead := `unknown field "` + prefix + "."
	for _, t := range w.texts {
		i := strings.Index(t, lead)
		if i < 0 {
			continue
		}
		rest := t[i+len(lead):]
		if end := strings.IndexByte(rest, '"'); end > 0 && !strings.ContainsAny(rest[:end], ".[") {
			out = append(out, rest[:end])
		}
	}
	return out
}

// Router is a client's warning handler: a request whose context carries a collector gets
// its warnings there (per request, so that two concurrent writes never see each other's);
// every other warning goes where it went before (the config's handler, or client-go's log).
type Router struct {
	fallback rest.WarningHandlerWithContext
}

// NewRouter routes the warnings cfg's handler would have had.
func NewRouter(cfg *rest.Config) Router {
	switch {
	case cfg.WarningHandlerWithContext != nil:
		return Router{fallback: cfg.WarningHandlerWithContext}
	case cfg.WarningHandler != nil:
		return Router{fallback: plainWarnings{cfg.WarningHandler}}
	}
	return Router{fallback: rest.WarningLogger{}}
}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (r Router) HandleWarningHeaderWithContext(ctx context.Context, code int, agent, text string) {
	if w, ok := ctx.Value(key{}).(*Warnings); ok {
		w.add(text)
		return
	}
	r.fallback.HandleWarningHeaderWithContext(ctx, code, agent, text)
}

// plainWarnings adapts a handler without a context.
type plainWarnings struct{ h rest.WarningHandler }

func (p plainWarnings) HandleWarningHeaderWithContext(_ context.Context, code int, agent, text string) {
	p.h.HandleWarningHeader(code, agent, text)
}
