package run

import (
	"context"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// warningsKey carries a request's warning collector in its context.
type warningsKey struct{}

// warnings are the apiserver's warnings (the Warning header) of the requests made with one
// context: the unknown fields a write's schema dropped, for one.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

// collectWarnings returns ctx carrying a fresh collector: the warnings of requests made with
// it go there instead of the log.
func collectWarnings(ctx context.Context) (context.Context, *warnings) {
	w := &warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

func (w *warnings) add(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// unknownFields returns the key of every `unknown field "<prefix>.<key>"` warning: the
// top-level keys of prefix the schema pruned. A deeper path (status.conditions[0].x) names a
// field inside a key the schema keeps: the key itself is not pruned.
func (w *warnings) unknownFields(prefix string) []string {
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

// warningRouter is the engine clients' warning handler: a request whose context carries a
// collector gets its warnings there (per request, so that two concurrent writes never see
// each other's); every other warning goes where it went before (the caller's handler, or
// client-go's log).
type warningRouter struct {
	fallback rest.WarningHandlerWithContext
}

func newWarningRouter(cfg *rest.Config) warningRouter {
	switch {
	case cfg.WarningHandlerWithContext != nil:
		return warningRouter{fallback: cfg.WarningHandlerWithContext}
	case cfg.WarningHandler != nil:
		return warningRouter{fallback: plainWarnings{cfg.WarningHandler}}
	}
	return warningRouter{fallback: rest.WarningLogger{}}
}

func (r warningRouter) HandleWarningHeaderWithContext(ctx context.Context, code int, agent, text string) {
	if w, ok := ctx.Value(warningsKey{}).(*warnings); ok {
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
