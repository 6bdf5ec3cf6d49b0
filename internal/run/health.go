package run

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orkspace/ork/internal/run/opcallback"
	"github.com/orkspace/ork/internal/trace"
)

// servers are the health and metrics listeners.
type servers struct{ list []*http.Server }

// startServers serves /healthz, /readyz and /metrics; equal addresses share one listener.
func (e *Engine) startServers() (*servers, error) {
	routes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if routes[addr] == nil {
			routes[addr] = http.NewServeMux()
		}
		return routes[addr]
	}
	if a := e.opts.HealthAddr; a != "" {
		m := mux(a)
		m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if err := e.live.Check(); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			// A standby replica is ready to take over: failing its probe would only stall
			// rolling updates of a leader-elected Deployment.
			if e.opts.LeaderElect && !e.lead.IsLeader() {
				fmt.Fprintln(w, "ok (standby: not the leader)")
				return
			}
			if !e.Ready() {
				http.Error(w, "informers not synced", http.StatusServiceUnavailable)
				return
			}
			if e.ring != nil && !e.ring.UpToDate() {
				http.Error(w, "the held shard buckets' caches are not synced", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
	}
	if a := e.opts.MetricsAddr; a != "" {
		m := mux(a)
		m.Handle("/metrics", promhttp.HandlerFor(e.opts.Metrics.Registry, promhttp.HandlerOpts{}))
		if e.trace != nil {
			m.Handle(trace.Prefix, e.trace.Handler())
		}
		if e.opts.Profiling {
			m.HandleFunc("/debug/pprof/", pprof.Index)
			m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			m.HandleFunc("/debug/pprof/profile", pprof.Profile)
			m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			m.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
	}
	if a := e.opts.OperationCallbackAddr; a != "" {
		mux(a).Handle("/operations/", opcallback.Handler(e.callbackDeps()))
	}
	s := &servers{}
	for addr, m := range routes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.shutdown()
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second}
		s.list = append(s.list, srv)
		if addr == e.opts.HealthAddr {
			e.healthAddr.Store(ln.Addr().String())
		}
		e.log.Info("serving", "addr", ln.Addr().String())
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				e.log.Warn("server stopped", "addr", addr, "err", err)
			}
		}()
	}
	return s, nil
}

func (s *servers) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.list {
		_ = srv.Shutdown(ctx)
	}
}

// HealthAddr is the bound address of /healthz and /readyz once serving ("127.0.0.1:0"
// resolves to a real port), else "".
func (e *Engine) HealthAddr() string {
	a, _ := e.healthAddr.Load().(string)
	return a
}
