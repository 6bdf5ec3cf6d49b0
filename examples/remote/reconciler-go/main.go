// Command reconciler-go is an example remote reconciler for ork: it answers every
// PreparedRequest for a WebApp with a Deployment and a Service built from the WebApp's spec.
// Standard library only.
package main

import (
	"crypto/subtle"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
)

// preparedRequest is the part of ork's PreparedRequest this reconciler reads.
type preparedRequest struct {
	Key    string `json:"key"`
	Object struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Image    string `json:"image"`
			Replicas int    `json:"replicas"`
			Port     int    `json:"port"`
		} `json:"spec"`
	} `json:"object"`
	Args     map[string]any `json:"args"`
	Prepared struct {
		Trigger  string `json:"trigger"`
		Deleting bool   `json:"deleting"`
	} `json:"prepared"`
}

type resource struct {
	Type   string         `json:"type"`
	Fields map[string]any `json:"fields"`
}

type result struct {
	Result    string         `json:"result"`
	Error     string         `json:"error,omitempty"`
	Status    map[string]any `json:"status,omitempty"`
	Resources []resource     `json:"resources,omitempty"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8088", "listen address")
	flag.Parse()
	token := os.Getenv("RECONCILER_TOKEN")
	if token == "" {
		log.Fatal("set RECONCILER_TOKEN to the token stored in the Secret ork reads")
	}
	http.HandleFunc("POST /reconcile", func(w http.ResponseWriter, r *http.Request) {
		want := "Bearer " + token
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var req preparedRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		log.Printf("reconcile %s (trigger %s, args %v)", req.Key, req.Prepared.Trigger, req.Args)
		writeJSON(w, reconcile(req))
	})
	log.Printf("listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}

// reconcile is the whole business logic: one Deployment and one Service per WebApp.
func reconcile(req preparedRequest) result {
	if req.Prepared.Deleting {
		return result{Result: "ok"} // children carry ownerReferences: the garbage collector removes them
	}
	spec, name := req.Object.Spec, req.Object.Metadata.Name
	if spec.Image == "" {
		return result{Result: "error", Error: "spec.image is required"}
	}
	port := spec.Port
	if port == 0 {
		port = 8080
	}
	replicas := spec.Replicas
	if replicas == 0 {
		replicas = 1
	}
	return result{
		Result: "ok",
		Status: map[string]any{"phase": "Ready", "replicas": replicas, "url": fmt.Sprintf("http://%s-svc", name)},
		Resources: []resource{
			{Type: "deployment", Fields: map[string]any{"name": name, "image": spec.Image, "replicas": replicas, "port": port}},
			{Type: "service", Fields: map[string]any{"name": name + "-svc", "port": 80, "targetPort": port}},
		},
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("write response: %v", err)
	}
}
