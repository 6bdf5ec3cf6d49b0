package remote

import (
	"net"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// maxPause bounds how long one Retry-After may silence an endpoint.
const maxPause = 5 * time.Minute

// Pauses remembers, per endpoint (scheme, host, port and path), until when it asked ork to
// wait (429 or 503 with Retry-After). The answer is about the endpoint, not the one key or
// CRD that got it: while it holds, no request is sent to that endpoint. Share one between the
// Reconcilers of an engine (Options.Pauses): one service often reconciles several CRDs at one
// endpoint. Another path of the same server is not held: a gateway or a multi-tenant host
// often serves unrelated reconcilers side by side, and one's throttling says nothing of the
// others'. Safe for concurrent use.
type Pauses struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// NewPauses returns an empty set of pauses.
func NewPauses() *Pauses { return &Pauses{} }

// endpointOf is the pause's key for u: the scheme, host and port (the scheme's default when
// u names none) and the path, so that http://h/x and http://h:80/x are one endpoint.
func endpointOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	p := path.Clean("/" + u.EscapedPath())
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port) + p
}

// pause makes the endpoint wait d from now (a longer pause already set is kept).
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
	if until.After(p.until[endpointOf(u)]) {
		p.until[endpointOf(u)] = until
	}
	// Forget the pauses that ended, so that a templated endpoint (a host per CR) does not
	// leave one entry per endpoint for the life of the engine.
	for endpoint, t := range p.until {
		if !now.Before(t) {
			delete(p.until, endpoint)
		}
	}
}

// remaining is how long the endpoint still asked to wait; 0 when it did not, or no longer.
func (p *Pauses) remaining(u *url.URL, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.until[endpointOf(u)]
	if !ok {
		return 0
	}
	if !now.Before(until) {
		delete(p.until, endpointOf(u))
		return 0
	}
	return until.Sub(now)
}

// Holding is true while any endpoint asked to wait: ready keys may then sit unsent, which is
// no sign of a stuck engine.
func (p *Pauses) Holding(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, until := range p.until {
		if now.Before(until) {
			return true
		}
	}
	return false
}
