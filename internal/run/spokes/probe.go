package spokes

import (
	"context"
	"log/slog"
	"time"

	"github.com/orkspace/ork/internal/target"
)

// ProbeInterval is how often every target with a client is probed (/readyz): a target
// whose watches merely go silent is noticed without any event.
const ProbeInterval = 10 * time.Second

// Probe probes every target of pool with a client every ProbeInterval and calls changed
// with each target whose reachability changed, for its CRs to be queued: those of a dead
// one get TargetUnreachable without any event, those of one back converge. The returned
// func stops it and waits.
func Probe(ctx context.Context, pool *target.Pool, changed func(target.Ref), log *slog.Logger) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(ProbeInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			before := map[target.Ref]bool{}
			for _, ref := range pool.Targets() {
				before[ref] = pool.StateOf(ref).Reachable
			}
			for ref, err := range pool.ProbeAll(ctx) {
				log.Debug("target probe failed", "target", ref.String(), "err", err)
			}
			for ref, was := range before {
				if pool.StateOf(ref).Reachable == was {
					continue
				}
				log.Info("target reachability changed", "target", ref.String(), "reachable", !was)
				changed(ref)
			}
		}
	}()
	return func() { cancel(); <-done }
}
