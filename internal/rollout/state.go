package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Phase is where a rollout is.
type Phase string

// Phases.
const (
	// Shadowing: mode shadow; the candidate answers, nothing of it is applied.
	Shadowing Phase = "Shadowing"
	// Progressing: mode canary, at Steps[Step].
	Progressing Phase = "Progressing"
	// Complete: the gate held for a whole interval at the last step (100%): promote the
	// candidate by making it the Katalog's endpoint.
	Complete Phase = "Complete"
	// RolledBack: the gate failed; every CR is back on stable until the candidate changes.
	RolledBack Phase = "RolledBack"
)

// Divergence is one CR's differing field paths, kept for `ork rollout status`.
type Divergence struct {
	CR    string    `json:"cr"`
	Paths []string  `json:"paths"`
	At    time.Time `json:"at"`
}

// keptDivergences is how many recent divergences the ConfigMap keeps.
const keptDivergences = 20

// State is a rollout's progress, kept in the ConfigMap `<name>-rollout` so that a restart
// of ork resumes at the same step with the same CRs on each side.
type State struct {
	// SpecHash identifies the candidate spec the state belongs to; a new candidate starts over.
	SpecHash    string
	Phase       Phase
	Step        int
	StepStarted time.Time
	Window      Window
	// FailedAtPercent is the slice that was on the candidate when the gate failed: its CRs
	// are each passed once on stable.
	FailedAtPercent int
	Reason          string
	Divergences     []Divergence
}

// Record keeps d among the last keptDivergences.
func (s *State) Record(d Divergence) {
	s.Divergences = append(s.Divergences, d)
	if n := len(s.Divergences); n > keptDivergences {
		s.Divergences = s.Divergences[n-keptDivergences:]
	}
}

// ConfigMap data keys.
const (
	keySpecHash    = "candidateSpecHash"
	keyPhase       = "phase"
	keyStep        = "step"
	keyStepStarted = "stepStarted"
	keyWindow      = "window"
	keyFailedAt    = "failedAtPercent"
	keyReason      = "reason"
	keyDivergences = "divergences"
)

// Data is s as ConfigMap data: plain strings, readable with kubectl.
func (s State) Data() (map[string]string, error) {
	w, err := json.Marshal(s.Window)
	if err != nil {
		return nil, err
	}
	d, err := json.Marshal(s.Divergences)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		keySpecHash:    s.SpecHash,
		keyPhase:       string(s.Phase),
		keyStep:        strconv.Itoa(s.Step),
		keyStepStarted: s.StepStarted.UTC().Format(time.RFC3339),
		keyWindow:      string(w),
		keyFailedAt:    strconv.Itoa(s.FailedAtPercent),
		keyReason:      s.Reason,
		keyDivergences: string(d),
	}, nil
}

// StateFrom reads what Data wrote. A ConfigMap someone edited into nonsense is an error, not
// a rollout restarted silently at step 0.
func StateFrom(data map[string]string) (State, error) {
	s := State{SpecHash: data[keySpecHash], Phase: Phase(data[keyPhase]), Reason: data[keyReason]}
	var err error
	if s.Step, err = strconv.Atoi(data[keyStep]); err != nil {
		return State{}, fmt.Errorf("rollout state %s: %w", keyStep, err)
	}
	if s.StepStarted, err = time.Parse(time.RFC3339, data[keyStepStarted]); err != nil {
		return State{}, fmt.Errorf("rollout state %s: %w", keyStepStarted, err)
	}
	if s.FailedAtPercent, err = strconv.Atoi(data[keyFailedAt]); err != nil {
		return State{}, fmt.Errorf("rollout state %s: %w", keyFailedAt, err)
	}
	if err := json.Unmarshal([]byte(data[keyWindow]), &s.Window); err != nil {
		return State{}, fmt.Errorf("rollout state %s: %w", keyWindow, err)
	}
	if err := json.Unmarshal([]byte(data[keyDivergences]), &s.Divergences); err != nil {
		return State{}, fmt.Errorf("rollout state %s: %w", keyDivergences, err)
	}
	switch s.Phase {
	case Shadowing, Progressing, Complete, RolledBack:
	default:
		return State{}, fmt.Errorf("rollout state %s: unknown phase %q", keyPhase, s.Phase)
	}
	return s, nil
}

// SpecHash is the hash of a candidate spec as JSON: any change to the candidate (a new
// endpoint, new steps, a new gate) starts its rollout over.
func SpecHash(spec any) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hash candidate spec: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}
