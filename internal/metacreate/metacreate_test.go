package metacreate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// A create sends the object as JSON with its options in the query, asks for the answer as
// metadata, and reads it; AlreadyExists stays an AlreadyExists (the ownership judgement
// depends on it).
func TestCreatorAsksForMetadataAndKeepsAlreadyExists(t *testing.T) {
	var mu sync.Mutex
	var got *http.Request
	var body []byte
	exists := false
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got, body = r, must(io.ReadAll(r.Body))
		rw.Header().Set("Content-Type", "application/json")
		if exists {
			rw.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(rw, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"AlreadyExists","code":409,"details":{"name":"web","kind":"deployments"}}`)
			return
		}
		_, _ = io.WriteString(rw, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web","namespace":"ns","uid":"u1","resourceVersion":"7"}}`)
	}))
	defer srv.Close()
	m, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "ns"}}}
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	out, err := m.Create(context.Background(), gvr, "ns", obj, metav1.CreateOptions{FieldManager: "ork", DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if out.GetUID() != "u1" || out.GetResourceVersion() != "7" {
		t.Errorf("answer uid %q rv %q, want u1 and 7", out.GetUID(), out.GetResourceVersion())
	}
	mu.Lock()
	if got.Method != http.MethodPost || got.URL.Path != "/apis/apps/v1/namespaces/ns/deployments" {
		t.Errorf("request %s %s, want POST /apis/apps/v1/namespaces/ns/deployments", got.Method, got.URL.Path)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if a := got.Header.Get("Accept"); a != MetadataAccept {
		t.Errorf("Accept %q, want %q", a, MetadataAccept)
	}
	if q := got.URL.Query(); q.Get("fieldManager") != "ork" || q.Get("dryRun") != metav1.DryRunAll {
		t.Errorf("query %v, want fieldManager=ork and dryRun=All", q)
	}
	if string(body) != string(must(obj.MarshalJSON())) {
		t.Errorf("body %s, want the object's JSON", body)
	}
	exists = true
	mu.Unlock()
	if _, err := m.Create(context.Background(), gvr, "ns", obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create of an existing name: %v, want AlreadyExists", err)
	}
	if p := collectionPath(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, ""); len(p) != 3 || p[0] != "api" || p[2] != "namespaces" {
		t.Errorf("path of a core cluster-scoped type = %v, want api/v1/namespaces", p)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
