// Package suspensions is the part of the suspend annotation that needs no controller: what
// ork remembers, in memory only, of the suspended custom resources (which were suspended at
// their last pass, when a delete that waited was resumed, which invalid annotation values
// were warned about), and the Suspended condition (its patch, the resume it records).
package suspensions

import (
	"context"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Memory is what a controller remembers of suspended CRs, in memory only: which were
// suspended at their last pass (the metric, and the resume's first pass), when a delete that
// waited was resumed, and which annotation values it has already warned about. A restart, or
// a bucket handed over (Forget), starts with none of it.
type Memory struct {
	mu sync.Mutex
	// suspended is the uid of each CR suspended at its last pass, by key.
	suspended map[string]types.UID
	// resumed is when each deleting CR that waited while suspended was resumed, by key:
	// finalizeTimeout counts from then (the engine's finalizeDeadline), whatever its calls answer.
	resumed map[string]resume
	// warned is the uid and value of the last invalid annotation reported, by key.
	warned map[string]warning
	// count reports how many are suspended (ork_suspended_crs), under mu: reported after
	// it, two passes could leave the older count last.
	count func(n int)
}

type resume struct {
	uid types.UID
	at  time.Time
}

type warning struct {
	uid   types.UID
	value string
}

// New remembers suspended CRs and reports their count to count (nil: nowhere).
func New(count func(n int)) *Memory {
	if count == nil {
		count = func(int) {}
	}
	return &Memory{suspended: map[string]types.UID{}, resumed: map[string]resume{}, warned: map[string]warning{}, count: count}
}

// Set records whether key's CR uid is suspended at this pass; was says whether it was at its
// last pass, n how many are now. A pass whose context has ended (its bucket released
// meanwhile: Forget ran, or runs, after the cancel) changes nothing, so that it cannot bring
// back what Forget dropped.
func (s *Memory) Set(ctx context.Context, key string, uid types.UID, on bool) (was bool, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was = s.suspended[key] == uid
	switch {
	case ctx.Err() != nil:
	case on:
		s.suspended[key] = uid
		delete(s.resumed, key) // suspended again: a later resume starts its own clock
	default:
		delete(s.suspended, key)
	}
	s.count(len(s.suspended))
	return was, len(s.suspended)
}

// Forget drops what is remembered of the CRs for which gone is true and returns how many
// CRs are still suspended.
func (s *Memory) Forget(gone func(types.UID) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.suspended, func(_ string, uid types.UID) bool { return gone(uid) })
	maps.DeleteFunc(s.resumed, func(_ string, r resume) bool { return gone(r.uid) })
	maps.DeleteFunc(s.warned, func(_ string, w warning) bool { return gone(w.uid) })
	s.count(len(s.suspended))
	return len(s.suspended)
}

// MarkResumed records that key's deleting CR uid was resumed at, unless ctx has ended (as
// Set). An earlier mark of the same uid stays: the clock starts at the first resume.
func (s *Memory) MarkResumed(ctx context.Context, key string, uid types.UID, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil || s.resumed[key].uid == uid {
		return
	}
	s.resumed[key] = resume{uid: uid, at: at}
}

// ResumedAt is when key's CR uid was resumed while deleting, zero if it was not.
func (s *Memory) ResumedAt(key string, uid types.UID) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.resumed[key]; r.uid == uid {
		return r.at
	}
	return time.Time{}
}

// ForgetResumed drops key's resume mark: its CR is gone.
func (s *Memory) ForgetResumed(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.resumed, key)
}

// WarnOnce reports whether the invalid value of uid's annotation is still to be reported,
// and marks it reported.
func (s *Memory) WarnOnce(key string, uid types.UID, value string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := warning{uid: uid, value: value}
	if s.warned[key] == w {
		return false
	}
	s.warned[key] = w
	return true
}

// ForgetWarning drops key's warned annotation value: its CR is gone, or no longer annotated.
func (s *Memory) ForgetWarning(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.warned, key)
}
