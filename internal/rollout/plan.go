package rollout

import (
	"fmt"
	"time"
)

// Mode is reconcile.remote.candidate.mode.
type Mode string

// Modes.
const (
	ModeShadow Mode = "shadow"
	ModeCanary Mode = "canary"
)

// Plan is a rollout's configuration: reconcile.remote.candidate's mode, canary and gate.
type Plan struct {
	Mode Mode
	// Steps are percents, increasing, the last 100.
	Steps    []int
	Interval time.Duration
	Gate     Gate
	// SpecHash identifies the candidate spec (SpecHash).
	SpecHash string
}

// DefaultSteps and DefaultInterval are candidate.canary's defaults.
var DefaultSteps = []int{5, 25, 50, 100}

// DefaultInterval is candidate.canary.interval's default.
const DefaultInterval = 10 * time.Minute

// Start is the state a rollout begins in, or resumes from when prev belongs to the same
// candidate spec (a restart of ork resumes at the same step).
func (p Plan) Start(prev *State, now time.Time) State {
	if prev != nil && prev.SpecHash == p.SpecHash && p.phaseFits(prev.Phase) && prev.Step < max(len(p.Steps), 1) {
		return *prev
	}
	phase := Progressing
	if p.Mode == ModeShadow {
		phase = Shadowing
	}
	return State{SpecHash: p.SpecHash, Phase: phase, StepStarted: now}
}

// phaseFits: a state written in one mode is not resumed in the other.
func (p Plan) phaseFits(ph Phase) bool {
	if p.Mode == ModeShadow {
		return ph == Shadowing
	}
	return ph != Shadowing
}

// Percent is the share of CRs (by InCanary) the candidate reconciles for real in s.
func (p Plan) Percent(s State) int {
	if s.Phase != Progressing && s.Phase != Complete || len(p.Steps) == 0 {
		return 0
	}
	return p.Steps[min(s.Step, len(p.Steps)-1)]
}

// Change is what Advance did, for the engine's log line, Event and metric.
type Change int

// Changes.
const (
	NoChange Change = iota
	// Stepped: the gate held for an interval; the slice grew to the next step.
	Stepped
	// Completed: the gate held for an interval at the last step.
	Completed
	// Failed: the gate failed; the rollout rolled back.
	Failed
)

// Advance judges s's window at now and moves the rollout on: a failed gate rolls back at
// once (a bad candidate must not wait for the interval to end), at any step and after
// completion until the candidate is promoted; a held gate steps after the
// interval; a pending gate (fewer than minSamples) waits, however long the interval. Shadow
// mode never steps, but its gate still fails, so `ork rollout status` tells a candidate that
// would have failed.
func (p Plan) Advance(s State, now time.Time) (State, Change) {
	if s.Phase == RolledBack {
		return s, NoChange
	}
	verdict, why := p.Gate.Judge(s.Window)
	switch {
	case s.Phase == Shadowing:
		// Nothing to roll back: the verdict is kept for ork rollout status, and shadowing
		// goes on (one timeout must not end the observation).
		switch verdict {
		case Fails:
			s.Reason = why
		case Holds:
			s.Reason = ""
		}
		return s, NoChange
	case verdict == Fails:
		s.FailedAtPercent = p.Percent(s)
		s.Phase, s.Reason = RolledBack, why
		return s, Failed
	case s.Phase == Complete:
		// Still judged until promoted: a candidate that fails at 100% rolls back too.
		return s, NoChange
	case verdict != Holds || s.Phase != Progressing || now.Sub(s.StepStarted) < p.Interval:
		return s, NoChange
	case s.Step+1 >= len(p.Steps):
		s.Phase = Complete
		s.Reason = fmt.Sprintf("the gate held for %s at %d%%: make the candidate the endpoint to promote it", p.Interval, p.Percent(s))
		return s, Completed
	}
	s.Step++
	s.StepStarted = now
	s.Window = Window{}
	return s, Stepped
}
