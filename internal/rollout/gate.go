package rollout

import "fmt"

// Reasons a candidate pass may end with that are not its fault: a throttled or canceled
// pass says nothing about the candidate's answers, so the gate does not count it as an error.
const (
	reasonSucceeded = "ReconcileSucceeded"
	reasonThrottled = "RemoteThrottled"
	reasonCanceled  = "ReconcileCanceled"
)

// Sample is one candidate pass as the gate sees it.
type Sample struct {
	// Reason is the pass's condition reason (ReconcileSucceeded on success).
	Reason string
	// Diverged is true when the candidate's answer differed from the stable one's in at
	// least one field after normalising (Diff returned paths).
	Diverged bool
	// Compared is true when there was a stable answer to compare with (shadowed passes and,
	// with shadowRest, the stable slice's); a canary pass has none.
	Compared bool
	// Served is true for a canary pass the candidate reconciled for real (its writes
	// included), false for a dry-run answer.
	Served bool
}

// Counted reports whether the sample enters the gate at all.
func (s Sample) Counted() bool { return s.Reason != reasonThrottled && s.Reason != reasonCanceled }

// Window is the gate's tally over the current step.
type Window struct {
	Samples     int `json:"samples"`
	Errors      int `json:"errors"`
	Compared    int `json:"compared"`
	Divergences int `json:"divergences"`
	// Served and ServedErrors count the canary passes the candidate reconciled for real:
	// their errors (writes the dry runs never reach) are judged on their own, not diluted
	// by the stable slice's shadowed dry runs.
	Served       int `json:"served,omitempty"`
	ServedErrors int `json:"servedErrors,omitempty"`
}

// Add counts one sample.
func (w *Window) Add(s Sample) {
	if !s.Counted() {
		return
	}
	w.Samples++
	if s.Reason != reasonSucceeded {
		w.Errors++
	}
	if s.Served {
		w.Served++
		if s.Reason != reasonSucceeded {
			w.ServedErrors++
		}
	}
	if s.Compared {
		w.Compared++
		if s.Diverged {
			w.Divergences++
		}
	}
}

// ErrorRatio is errors over samples, 0 without samples.
func (w Window) ErrorRatio() float64 { return ratio(w.Errors, w.Samples) }

// DivergenceRatio is divergences over compared samples, 0 without any.
func (w Window) DivergenceRatio() float64 { return ratio(w.Divergences, w.Compared) }

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Gate is reconcile.remote.candidate.gate.
type Gate struct {
	MaxErrorRatio      float64
	MaxDivergenceRatio float64
	// MinSamples is the number of counted samples before any verdict; default 10.
	MinSamples int
}

// DefaultMinSamples is gate.minSamples' default.
const DefaultMinSamples = 10

// Verdict is the gate's judgement of a window.
type Verdict int

// Verdicts.
const (
	// Pending: fewer than MinSamples samples; no verdict yet.
	Pending Verdict = iota
	// Holds: both ratios within their bounds.
	Holds
	// Fails: a ratio is above its bound.
	Fails
)

// Judge returns the gate's verdict on w and, when it fails, why in one sentence. Each ratio
// is judged once its own count reaches MinSamples: the error ratio over every candidate
// answer, again over the passes it served for real alone, and the divergence ratio over the
// compared answers. No verdict before MinSamples answers in all.
func (g Gate) Judge(w Window) (Verdict, string) {
	minSamples := g.MinSamples
	if minSamples <= 0 {
		minSamples = DefaultMinSamples
	}
	if w.Samples < minSamples {
		return Pending, ""
	}
	if r := w.ErrorRatio(); r > g.MaxErrorRatio {
		return Fails, fmt.Sprintf("error ratio %.3f (%d of %d candidate passes) is above maxErrorRatio %g", r, w.Errors, w.Samples, g.MaxErrorRatio)
	}
	if r := ratio(w.ServedErrors, w.Served); w.Served >= minSamples && r > g.MaxErrorRatio {
		return Fails, fmt.Sprintf("error ratio %.3f (%d of %d canary passes the candidate reconciled) is above maxErrorRatio %g", r, w.ServedErrors, w.Served, g.MaxErrorRatio)
	}
	if r := w.DivergenceRatio(); w.Compared >= minSamples && r > g.MaxDivergenceRatio {
		return Fails, fmt.Sprintf("divergence ratio %.3f (%d of %d compared answers) is above maxDivergenceRatio %g", r, w.Divergences, w.Compared, g.MaxDivergenceRatio)
	}
	return Holds, ""
}
