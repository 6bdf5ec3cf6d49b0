package run

import (
	"errors"

	"github.com/orkspace/ork/internal/run/opcallback"
	"github.com/orkspace/ork/internal/run/servers"
	"github.com/orkspace/ork/internal/trace"
)

// startServers serves /healthz, /readyz and /metrics (run/servers).
func (e *Engine) startServers() (*servers.Servers, error) {
	o := servers.Options{
		HealthAddr: e.opts.HealthAddr, MetricsAddr: e.opts.MetricsAddr,
		Live: e.live.Check, Ready: e.readiness, Registry: e.opts.Metrics.Registry,
		Profiling: e.opts.Profiling, Log: e.log,
	}
	if e.trace != nil {
		o.TracePrefix, o.Trace = trace.Prefix, e.trace.Handler()
	}
	if a := e.opts.OperationCallbackAddr; a != "" {
		o.CallbackAddr, o.Callback = a, opcallback.Handler(e.callbackDeps())
	}
	s, err := servers.Start(o)
	if err != nil {
		return nil, err
	}
	if a := s.HealthAddr(); a != "" {
		e.healthAddr.Store(a)
	}
	return s, nil
}

// readiness judges /readyz.
func (e *Engine) readiness() (string, error) {
	// A standby replica is ready to take over: failing its probe would only stall rolling
	// updates of a leader-elected Deployment.
	if e.opts.LeaderElect && !e.lead.IsLeader() {
		return "standby: not the leader", nil
	}
	if !e.Ready() {
		return "", errors.New("informers not synced")
	}
	if e.ring != nil && !e.ring.UpToDate() {
		return "", errors.New("the held shard buckets' caches are not synced")
	}
	return "", nil
}

// HealthAddr is the bound address of /healthz and /readyz once serving ("127.0.0.1:0"
// resolves to a real port), else "".
func (e *Engine) HealthAddr() string {
	a, _ := e.healthAddr.Load().(string)
	return a
}
