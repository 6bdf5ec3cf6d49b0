// Package servers serves the engine's HTTP endpoints: /healthz and /readyz, /metrics, the
// decision trace and, when asked, pprof.
package servers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options are what the servers serve; an empty address serves nothing there.
type Options struct {
	// HealthAddr serves /healthz and /readyz.
	HealthAddr string
	// MetricsAddr serves /metrics, the trace and pprof; the health address when equal.
	MetricsAddr string
	// Live judges /healthz: an error fails it.
	Live func() error
	// Ready judges /readyz: an error fails it; a note says why a ready answer is one.
	Ready func() (note string, err error)
	// Registry is what /metrics gathers.
	Registry prometheus.Gatherer
	// TracePrefix and Trace serve the decision trace; nil Trace serves none.
	TracePrefix string
	Trace       http.Handler
	// Profiling serves /debug/pprof/ on the metrics address.
	Profiling bool
	// CallbackAddr serves Callback under /operations/ (the completion callback of
	// long-running operations); empty serves none.
	CallbackAddr string
	Callback     http.Handler
	Log          *slog.Logger
}

// Servers are the listeners Start opened.
type Servers struct {
	list       []*http.Server
	healthAddr string
}

// Start listens on o's addresses and serves them until Shutdown; equal addresses share one
// listener.
func Start(o Options) (*Servers, error) {
	routes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if routes[addr] == nil {
			routes[addr] = http.NewServeMux()
		}
		return routes[addr]
	}
	if a := o.HealthAddr; a != "" {
		m := mux(a)
		m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if err := o.Live(); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			note, err := o.Ready()
			if err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			if note != "" {
				fmt.Fprintf(w, "ok (%s)\n", note)
				return
			}
			fmt.Fprintln(w, "ok")
		})
	}
	if a := o.MetricsAddr; a != "" {
		m := mux(a)
		m.Handle("/metrics", promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{}))
		if o.Trace != nil {
			m.Handle(o.TracePrefix, o.Trace)
		}
		if o.Profiling {
			m.HandleFunc("/debug/pprof/", pprof.Index)
			m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			m.HandleFunc("/debug/pprof/profile", pprof.Profile)
			m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			m.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
	}
	if a := o.CallbackAddr; a != "" && o.Callback != nil {
		mux(a).Handle("/operations/", o.Callback)
	}
	s := &Servers{}
	for addr, m := range routes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.Shutdown()
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second}
		s.list = append(s.list, srv)
		if addr == o.HealthAddr {
			s.healthAddr = ln.Addr().String()
		}
		o.Log.Info("serving", "addr", ln.Addr().String())
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				o.Log.Warn("server stopped", "addr", addr, "err", err)
			}
		}()
	}
	return s, nil
}

// HealthAddr is the bound address of /healthz and /readyz ("127.0.0.1:0" resolves to a
// real port), else "".
func (s *Servers) HealthAddr() string { return s.healthAddr }

// Shutdown stops every listener, waiting a bounded time for requests in flight.
func (s *Servers) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.list {
		_ = srv.Shutdown(ctx)
	}
}
