package remote

import (
	"net/url"
	"sync"
	"time"
)

// maxPause bounds how long one Retry-After may silence an endpoint.
const maxPause = 5 * time.Minute

// Pauses remembers, per endpoint server, until when it asked ork to wait (429 or 503 with
// Retry-After). The answer is about the server, not the one key or CRD that got it: while it
// holds, no request is sent to that server. Share one between the Reconcilers of an engine
// (Options.Pauses): one service often reconciles several CRDs. Safe for concurrent use.
type Pauses struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// NewPauses returns an empty set of pauses.
func NewPauses() *Pauses { return &Pauses{} }

func serverOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// pause makes the server wait d from now (a longer pause already set is kept).
func (p *Pauses) pause(u *url.URL, now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	until := now.Add(min(d, maxPause))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = map[string]time.Time{}
	}
	if until.After(p.until[serverOf(u)]) {
		p.until[serverOf(u)] = until
	}
	// Forget the pauses that ended, so that a templated endpoint (a host per CR) does not
	// leave one entry per server for the life of the engine.
	for server, t := range p.until {
		if !now.Before(t) {
			delete(p.until, server)
		}
	}
}

// remaining is how long the server still asked to wait; 0 when it did not, or no longer.
func (p *Pauses) remaining(u *url.URL, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.until[serverOf(u)]
	if !ok {
		return 0
	}
	if !now.Before(until) {
		delete(p.until, serverOf(u))
		return 0
	}
	return until.Sub(now)
}
