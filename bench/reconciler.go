package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// reconciler is the trivial remote reconciler every system is measured with: a Deployment
// and a Service intent named after the CR, and status phase Ready. It counts its calls.
type reconciler struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newReconciler() *reconciler {
	r := &reconciler{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.calls.Add(1)
		var body struct {
			Object struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"object"`
		}
		data, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(data, &body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer(body.Object.Metadata.Name))
	}))
	return r
}

// answer is the RemoteReconcileResult for the CR name.
func answer(name string) map[string]any {
	return map[string]any{
		"result": "ok",
		"status": map[string]any{"phase": "Ready"},
		"resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": "nginx:1.27", "port": 8080}},
			map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
		},
	}
}
