package rollout

import (
	"fmt"
	"time"

	"github.com/orkspace/ork/internal/katalog"
)

// PlanOf is the plan of reconcile.remote.candidate, its defaults filled in. ork run and
// ork rollout status read the same Katalog through it, so that they agree on the steps and
// the gate.
func PlanOf(spec *katalog.Candidate) (Plan, error) {
	hash, err := SpecHash(spec)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Mode: Mode(spec.Mode), Steps: spec.Canary.Steps, Interval: katalog.DefaultCanaryInterval, SpecHash: hash,
		Gate: Gate{MaxErrorRatio: spec.Gate.MaxErrorRatio, MaxDivergenceRatio: spec.Gate.MaxDivergenceRatio, MinSamples: katalog.DefaultGateMinSamples}}
	if len(p.Steps) == 0 {
		p.Steps = katalog.DefaultCanarySteps()
	}
	if spec.Canary.Interval != "" {
		if p.Interval, err = time.ParseDuration(spec.Canary.Interval); err != nil {
			return Plan{}, fmt.Errorf("candidate.canary.interval: %w", err)
		}
	}
	if spec.Gate.MinSamples != nil {
		p.Gate.MinSamples = *spec.Gate.MinSamples
	}
	return p, nil
}
