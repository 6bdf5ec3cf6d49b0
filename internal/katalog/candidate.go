package katalog

import "time"

// Candidate is reconcile.remote.candidate: a new version of the reconciler, shadowed (its
// answers compared with the stable one's, nothing applied) or canaried (a growing slice of
// CRs reconciled by it for real), rolled back on its own when its gate fails. Removing it
// from the Katalog aborts the rollout.
type Candidate struct {
	// Endpoint is the candidate's absolute http(s) URL, or a template rendering to one.
	Endpoint string `json:"endpoint,omitempty"`
	// Auth, like remote.auth, for the candidate; none when absent.
	Auth *Auth `json:"auth,omitempty"`
	// Timeout bounds one candidate call (Go duration); default remote.timeout's value.
	Timeout string `json:"timeout,omitempty"`
	// Mode is "shadow" or "canary".
	Mode string `json:"mode,omitempty"`
	// Concurrency bounds the shadow calls in flight; default DefaultCandidateConcurrency.
	Concurrency *int `json:"concurrency,omitempty"`
	// ShadowDeletes shadows passes of deleted CRs too (prepared.deleting); default false,
	// because a reconciler may clean up outside the cluster whatever dryRun says.
	ShadowDeletes bool          `json:"shadowDeletes,omitempty"`
	Canary        CanarySteps   `json:"canary,omitempty"`
	Gate          CandidateGate `json:"gate,omitempty"`
}

// CanarySteps is candidate.canary: how the slice grows.
type CanarySteps struct {
	// Steps are increasing percents ending at 100; default 5, 25, 50, 100.
	Steps []int `json:"steps,omitempty"`
	// Interval is how long each step lasts with its gate held (Go duration); default 10m.
	Interval string `json:"interval,omitempty"`
	// ShadowRest keeps shadowing the stable slice; default true.
	ShadowRest *bool `json:"shadowRest,omitempty"`
}

// CandidateGate is candidate.gate: when a rollout stops and rolls back.
type CandidateGate struct {
	// MaxErrorRatio is the highest share of candidate passes that may fail; default 0.
	MaxErrorRatio float64 `json:"maxErrorRatio,omitempty"`
	// MaxDivergenceRatio is the highest share of compared answers that may differ; default 0.
	MaxDivergenceRatio float64 `json:"maxDivergenceRatio,omitempty"`
	// MinSamples is how many candidate passes the gate needs before a verdict; default 10.
	MinSamples *int `json:"minSamples,omitempty"`
}

// Defaults of reconcile.remote.candidate.
const (
	DefaultCandidateConcurrency = 4
	DefaultCanaryInterval       = 10 * time.Minute
	DefaultGateMinSamples       = 10
)

// DefaultCanarySteps is candidate.canary.steps' default.
func DefaultCanarySteps() []int { return []int{5, 25, 50, 100} }

// ShadowRestOrDefault is canary.shadowRest, true when unset.
func (c CanarySteps) ShadowRestOrDefault() bool { return c.ShadowRest == nil || *c.ShadowRest }
