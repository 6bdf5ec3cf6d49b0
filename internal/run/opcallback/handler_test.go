package opcallback

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// fakeEngine is the handler's Deps over one custom resource.
type fakeEngine struct {
	key     []byte
	keyErr  error
	owns    bool
	held    Held
	present bool
	woken   []string
	counts  map[string]int
}

func (f *fakeEngine) deps() Deps {
	f.counts = map[string]int{}
	return Deps{
		Key:  func(context.Context) ([]byte, error) { return f.key, f.keyErr },
		Owns: func(types.UID) bool { return f.owns },
		Find: func(_, _ string, _ types.UID) (Held, bool) { return f.held, f.present },
		Wake: func(ns, name string, _ types.UID) error {
			f.woken = append(f.woken, ns+"/"+name)
			return nil
		},
		Count: func(r string) { f.counts[r]++ },
		Log:   slog.New(slog.DiscardHandler),
	}
}

func body(t *testing.T, b Body) string {
	t.Helper()
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestHandler(t *testing.T) {
	key := []byte("secret-key")
	op := Body{Namespace: "ns", Name: "db", UID: "uid-1", Generation: 2, ID: "op-1"}
	good := Token(key, op.UID, op.Generation, op.ID)
	other := op
	other.ID = "op-2"
	tests := []struct {
		name       string
		path, body string
		edit       func(*fakeEngine)
		wantCode   int
		wantResult string
		wantWoken  bool
	}{
		{"the held operation's callback wakes the custom resource", "/operations/" + good, body(t, op), nil, 202, ResultAccepted, true},
		{"the start call's token too", "/operations/" + Token(key, op.UID, op.Generation, ""), body(t, op), nil, 202, ResultAccepted, true},
		{"a forged token", "/operations/" + Token([]byte("guess"), op.UID, op.Generation, op.ID), body(t, op), nil, 403, ResultForged, false},
		{"a token of another operation", "/operations/" + good, body(t, other), nil, 403, ResultForged, false},
		{"replayed after the operation ended", "/operations/" + good, body(t, op), func(f *fakeEngine) { f.held.ID = "" }, 403, ResultNotHeld, false},
		{"another operation held now", "/operations/" + good, body(t, op), func(f *fakeEngine) { f.held.ID = "op-9" }, 403, ResultNotHeld, false},
		{"another object of that name", "/operations/" + good, body(t, op), func(f *fakeEngine) { f.held.UID = "uid-2" }, 403, ResultNotHeld, false},
		{"no such object", "/operations/" + good, body(t, op), func(f *fakeEngine) { f.present = false }, 404, ResultNotFound, false},
		{"another replica's", "/operations/" + good, body(t, op), func(f *fakeEngine) { f.owns = false }, 503, ResultNotOwner, false},
		{"no key", "/operations/" + good, body(t, op), func(f *fakeEngine) { f.keyErr = errors.New("secret not found") }, 503, ResultUnavailable, false},
		{"not JSON", "/operations/" + good, "{", nil, 400, ResultBadRequest, false},
		{"two bodies", "/operations/" + good, body(t, op) + body(t, op), nil, 400, ResultBadRequest, false},
		{"no id", "/operations/" + good, `{"namespace":"ns","name":"db","uid":"uid-1","generation":2}`, nil, 400, ResultBadRequest, false},
		{"a body over the bound", "/operations/" + good, `{"namespace":"` + strings.Repeat("x", MaxBody) + `"}`, nil, 400, ResultBadRequest, false},
		{"a token too long", "/operations/" + strings.Repeat("a", 100), body(t, op), nil, 400, ResultBadRequest, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEngine{key: key, owns: true, present: true, held: Held{UID: op.UID, Generation: op.Generation, ID: op.ID}}
			if tt.edit != nil {
				tt.edit(f)
			}
			srv := httptest.NewServer(Handler(f.deps()))
			defer srv.Close()
			resp, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantCode)
			}
			if tt.wantCode == 503 && resp.Header.Get("Retry-After") == "" {
				t.Error("a 503 without Retry-After")
			}
			if f.counts[tt.wantResult] != 1 {
				t.Errorf("counts = %v, want one %s", f.counts, tt.wantResult)
			}
			if woken := len(f.woken) == 1; woken != tt.wantWoken {
				t.Errorf("woken = %v, want %v", f.woken, tt.wantWoken)
			}
		})
	}
}

func TestHandlerServesOnlyPOST(t *testing.T) {
	f := &fakeEngine{}
	srv := httptest.NewServer(Handler(f.deps()))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/operations/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || len(f.counts) != 0 {
		t.Errorf("GET: status %d, counts %v; want 405 and nothing counted", resp.StatusCode, f.counts)
	}
}
