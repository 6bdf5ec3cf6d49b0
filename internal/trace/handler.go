package trace

import (
	"encoding/json"
	"net/http"
)

// Prefix is where Handler serves: mount it with mux.Handle(trace.Prefix, store.Handler()).
const Prefix = "/debug/decisions/"

// ObjectTrace is the JSON of one object's decisions.
type ObjectTrace struct {
	Key
	// Decisions are oldest first.
	Decisions []Decision `json:"decisions"`
}

// Listing is the JSON of the objects with decisions.
type Listing struct {
	Objects []Summary `json:"objects"`
}

// apiError is the JSON body of a 404.
type apiError struct {
	Error string `json:"error"`
}

// Handler serves, as JSON:
//
//	GET /debug/decisions/                             Listing
//	GET /debug/decisions/{crd}/{namespace}/{name}     ObjectTrace
//	GET /debug/decisions/{crd}/{name}                 ObjectTrace of a cluster-scoped object
//
// It is unauthenticated: serve it only where the metrics are, and only on request.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix+"{$}", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, Listing{Objects: s.Objects()})
	})
	one := func(w http.ResponseWriter, r *http.Request) {
		k := Key{CRD: r.PathValue("crd"), Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
		ds := s.Decisions(k)
		if ds == nil {
			write(w, http.StatusNotFound, apiError{Error: "no decisions for " + k.String()})
			return
		}
		write(w, http.StatusOK, ObjectTrace{Key: k, Decisions: ds})
	}
	mux.HandleFunc("GET "+Prefix+"{crd}/{namespace}/{name}", one)
	mux.HandleFunc("GET "+Prefix+"{crd}/{name}", one)
	return mux
}

func write(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away: nothing to tell it
}
