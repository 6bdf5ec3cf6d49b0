package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// reconciler is the trivial remote reconciler every system is measured with: the
// workload's answer for the CR (workload.answer), status phase Ready. It counts its calls.
type reconciler struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newReconciler(wl workload) *reconciler {
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
		_ = json.NewEncoder(w).Encode(wl.answer(body.Object.Metadata.Name))
	}))
	return r
}
