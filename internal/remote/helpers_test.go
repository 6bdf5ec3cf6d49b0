package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"

	"github.com/orkspace/ork/internal/katalog"
)

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
}

// captured is one request as the endpoint received it.
type captured struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// newEndpoint starts a loopback reconciler that records each request on the returned
// channel, then answers with h.
func newEndpoint(t *testing.T, h http.HandlerFunc) (*httptest.Server, <-chan captured) {
	t.Helper()
	reqs := make(chan captured, 64)
	srv := httptest.NewServer(recording(reqs, h))
	t.Cleanup(srv.Close)
	return srv, reqs
}

func recording(reqs chan<- captured, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reqs <- captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		h(w, r)
	}
}

// answer responds with a fixed status, body and headers.
func answer(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// next returns the one request the endpoint must have received by now: Reconcile returned,
// so the handler has already run.
func next(t *testing.T, reqs <-chan captured) captured {
	t.Helper()
	select {
	case c := <-reqs:
		return c
	default:
		t.Fatal("the endpoint received no request")
		return captured{}
	}
}

// secrets is an in-memory SecretSource (the interface the engine implements).
type secrets struct {
	mu     sync.Mutex
	values map[string]string
	reads  []string
}

func newSecrets(kv ...string) *secrets {
	s := &secrets{values: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.values[kv[i]] = kv[i+1]
	}
	return s
}

// set stores value under "namespace/name/key".
func (s *secrets) set(ref, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[ref] = value
}

func (s *secrets) SecretValue(_ context.Context, namespace, name, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref := namespace + "/" + name + "/" + key
	s.reads = append(s.reads, ref)
	v, ok := s.values[ref]
	if !ok {
		return nil, fmt.Errorf("secret %s/%s not found", namespace, name)
	}
	return []byte(v), nil
}

// crd is a remote CRD for endpoint; edit adjusts its remote block.
func crd(endpoint string, edit func(*katalog.Remote)) *katalog.CRD {
	off := false
	rem := &katalog.Remote{Endpoint: endpoint, Protocol: "http", Timeout: "10s"}
	if edit != nil {
		edit(rem)
	}
	return &katalog.CRD{
		Name:     "webapp",
		APITypes: &katalog.APITypes{Group: "myorg.io", Version: "v1", Kind: "WebApp", Plural: "webapps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{
			Default: &off, Remote: rem,
		}},
	}
}

func mustNew(t testing.TB, c *katalog.CRD, opts Options) *Reconciler {
	t.Helper()
	r, err := New(c, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// webapp is a custom resource as the informer cache holds it.
func webapp() map[string]any {
	return map[string]any{
		"apiVersion": "myorg.io/v1",
		"kind":       "WebApp",
		"metadata": map[string]any{
			"name": "my-webapp", "namespace": "default", "uid": "0b5e-uid", "generation": int64(3),
			"resourceVersion": "4711",
			"labels":          map[string]any{"team": "web"},
			"annotations":     map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{...}", "note": "a<b&c"},
			"managedFields": []any{map[string]any{
				"manager": "kubectl", "operation": "Apply", "fieldsV1": map[string]any{"f:spec": map[string]any{}},
			}},
		},
		"spec": map[string]any{
			"replicas": int64(2), "logLevel": "info", "environment": "production", "image": "nginx:1.27",
			"debug": "true",
		},
		"status": map[string]any{"phase": "Pending"},
	}
}

// child is an owned object as the engine collects it.
func child(kind, name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{
			"name": name, "namespace": "default",
			"managedFields": []any{map[string]any{"manager": "orkestra"}},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"readyReplicas": int64(1)},
	}
}

// clone deep-copies a JSON-shaped value, keeping Go types (a JSON round trip would not).
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// decode unmarshals a request body keeping numbers as json.Number, to check their JSON type.
func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	return m
}
