package target

import (
	"time"
)

// State is what the pool knows of a target's reachability.
type State struct {
	// Reachable is false from the first failure until the next success.
	Reachable bool
	// Since is when the target became unreachable (zero while reachable).
	Since time.Time
	// Reason is the last failure's error text.
	Reason string
	// Failures counts the failures in a row.
	Failures int
	// Backoff is the current wait between tries; RetryAt when the next try is let through.
	Backoff time.Duration
	RetryAt time.Time
}

// state is a target's circuit breaker: closed (reachable), open (unreachable, every caller
// refused until RetryAt), then half-open (one caller let through per backoff).
type state struct{ State }

// Reachable reports whether work for ref should go to its target now, and when not, why
// (the last failure). A target never reported on is reachable. While unreachable, one
// caller per backoff is let through to try it (the next try is pushed a backoff further at
// once, so that a caller that never reports holds nothing), and the others are refused
// without waiting: a dead target holds no worker.
func (p *Pool) Reachable(ref Ref) (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.states[ref]
	if s == nil || s.State.Reachable {
		return true, ""
	}
	now := p.opts.Now()
	if now.Before(s.RetryAt) {
		return false, s.Reason
	}
	s.RetryAt = now.Add(s.Backoff)
	return true, ""
}

// Failed records that ref's target did not answer (or its kubeconfig cannot be used): it
// is unreachable, and its backoff doubles from MinBackoff up to MaxBackoff.
func (p *Pool) Failed(ref Ref, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.opts.Now()
	s := p.state(ref)
	if s.State.Reachable {
		s.State = State{Since: now, Backoff: p.opts.MinBackoff}
	} else {
		s.Backoff = min(2*s.Backoff, p.opts.MaxBackoff)
	}
	s.Failures++
	s.Reason = "unknown error"
	if err != nil {
		s.Reason = err.Error()
	}
	s.RetryAt = now.Add(s.Backoff)
}

// Succeeded records that ref's target answered: it is reachable again.
func (p *Pool) Succeeded(ref Ref) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state(ref).State = State{Reachable: true}
}

// StateOf is ref's state; a target never reported on is reachable.
func (p *Pool) StateOf(ref Ref) State {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.states[ref]; s != nil {
		return s.State
	}
	return State{Reachable: true}
}

// state is ref's breaker, made reachable when new; p.mu is held.
func (p *Pool) state(ref Ref) *state {
	s := p.states[ref]
	if s == nil {
		s = &state{State{Reachable: true}}
		p.states[ref] = s
	}
	return s
}
