package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/orkspace/ork/internal/naming"
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
	SpecHash    string    `json:"candidateSpecHash"`
	Phase       Phase     `json:"phase"`
	Step        int       `json:"step"`
	StepStarted time.Time `json:"stepStarted"`
	Window      Window    `json:"window"`
	// FailedAtPercent is the slice that was on the candidate when the gate failed: its CRs
	// are each passed once on stable.
	FailedAtPercent int          `json:"failedAtPercent,omitempty"`
	Reason          string       `json:"reason,omitempty"`
	Divergences     []Divergence `json:"divergences,omitempty"`
}

// Record keeps d among the last keptDivergences.
func (s *State) Record(d Divergence) {
	s.Divergences = append(s.Divergences, d)
	if n := len(s.Divergences); n > keptDivergences {
		s.Divergences = s.Divergences[n-keptDivergences:]
	}
}

// ConfigMapName is naming.RolloutConfigMapName, kept here for the engine (internal/run).
func ConfigMapName(operator string) string { return naming.RolloutConfigMapName(operator) }

// Encode is s as the value of its CRD's key in the ConfigMap: JSON, readable with kubectl.
func (s State) Encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode rollout state: %w", err)
	}
	return string(b), nil
}

// Decode reads what Encode wrote. A ConfigMap someone edited into nonsense is an error, not
// a rollout restarted silently at step 0.
func Decode(value string) (State, error) {
	var s State
	if err := json.Unmarshal([]byte(value), &s); err != nil {
		return State{}, fmt.Errorf("decode rollout state: %w", err)
	}
	switch s.Phase {
	case Shadowing, Progressing, Complete, RolledBack:
	default:
		return State{}, fmt.Errorf("decode rollout state: unknown phase %q", s.Phase)
	}
	if s.Step < 0 {
		return State{}, fmt.Errorf("decode rollout state: negative step %d", s.Step)
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
