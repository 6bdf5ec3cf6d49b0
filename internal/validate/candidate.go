package validate

import (
	"fmt"
	"slices"

	"github.com/orkspace/ork/internal/katalog"
)

const candidatePath = remotePath + ".candidate"

// candidate checks reconcile.remote.candidate: an endpoint and auth as remote's own, a mode,
// bounded concurrency, steps that grow to 100 and gate ratios that are ratios.
func (k *checker) candidate(c *katalog.Candidate) {
	if c == nil {
		return
	}
	k.endpoint(candidatePath+".endpoint", c.Endpoint)
	k.auth(candidatePath+".auth", c.Auth)
	k.tokenOverHTTP(candidatePath, c.Endpoint, c.Auth)
	if c.Endpoint != "" && c.Endpoint == k.crd.OperatorBox.Reconcile.Remote.Endpoint {
		k.warnAt(katalog.RuleCandidateUnused, candidatePath+".endpoint", "candidate.endpoint is remote.endpoint: the candidate is the stable reconciler",
			"point candidate.endpoint at the new reconciler's URL, or remove candidate")
	}
	for _, d := range []struct{ name, value string }{{"timeout", c.Timeout}, {"canary.interval", c.Canary.Interval}} {
		if d.value == "" {
			continue
		}
		if msg := checkDuration(d.name, d.value); msg != "" {
			k.errorAt(katalog.RuleDuration, candidatePath+"."+d.name, msg, "use a positive Go duration such as 10m")
		}
	}
	switch c.Mode {
	case "shadow", "canary":
	case "":
		k.errorAt(katalog.RuleCandidate, candidatePath+".mode", "candidate.mode is required",
			"set mode: shadow to compare answers with nothing applied, or mode: canary to move CRs over in steps")
	default:
		k.errorAt(katalog.RuleCandidate, candidatePath+".mode", fmt.Sprintf("candidate.mode %q is neither shadow nor canary", c.Mode),
			"set mode: shadow or mode: canary")
	}
	if n := c.Concurrency; n != nil && (*n < 1 || *n > 64) {
		k.errorAt(katalog.RuleCandidate, candidatePath+".concurrency", fmt.Sprintf("candidate.concurrency %d is not between 1 and 64", *n),
			fmt.Sprintf("leave it out for %d, or set a number from 1 to 64", katalog.DefaultCandidateConcurrency))
	}
	if c.Mode == "shadow" && (len(c.Canary.Steps) > 0 || c.Canary.Interval != "" || c.Canary.ShadowRest != nil) {
		k.warnAt(katalog.RuleCandidateUnused, candidatePath+".canary", "candidate.canary has no effect in mode shadow",
			"set mode: canary to move CRs over in these steps, or remove canary")
	}
	k.canarySteps(c.Canary.Steps)
	g := c.Gate
	for _, r := range []struct {
		name  string
		value float64
	}{{"maxErrorRatio", g.MaxErrorRatio}, {"maxDivergenceRatio", g.MaxDivergenceRatio}} {
		if r.value < 0 || r.value > 1 {
			k.errorAt(katalog.RuleCandidate, candidatePath+".gate."+r.name, fmt.Sprintf("gate.%s %g is not between 0 and 1", r.name, r.value),
				"a ratio: 0.05 lets one pass in twenty fail")
		}
	}
	if n := g.MinSamples; n != nil && *n < 1 {
		k.errorAt(katalog.RuleCandidate, candidatePath+".gate.minSamples", fmt.Sprintf("gate.minSamples %d is not positive", *n),
			fmt.Sprintf("leave it out for %d, or set a positive number", katalog.DefaultGateMinSamples))
	}
}

func (k *checker) canarySteps(steps []int) {
	if len(steps) == 0 {
		return
	}
	at := candidatePath + ".canary.steps"
	hint := "list increasing percents ending at 100, e.g. [5, 25, 50, 100]"
	for i, s := range steps {
		if s < 1 || s > 100 {
			k.errorAt(katalog.RuleCanarySteps, fmt.Sprintf("%s[%d]", at, i), fmt.Sprintf("canary step %d is not a percent from 1 to 100", s), hint)
			return
		}
		if i > 0 && s <= steps[i-1] {
			k.errorAt(katalog.RuleCanarySteps, fmt.Sprintf("%s[%d]", at, i), fmt.Sprintf("canary step %d does not grow from %d", s, steps[i-1]), hint)
			return
		}
	}
	if slices.Max(steps) != 100 {
		k.errorAt(katalog.RuleCanarySteps, at, fmt.Sprintf("canary steps end at %d, not 100: the rollout would never complete", steps[len(steps)-1]), hint)
	}
}
