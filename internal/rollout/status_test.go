package rollout

import (
	"testing"
	"time"

	"github.com/orkspace/ork/internal/katalog"
)

func TestPlanOfFillsDefaults(t *testing.T) {
	n := 3
	p, err := PlanOf(&katalog.Candidate{Endpoint: "http://c", Mode: "canary", Gate: katalog.CandidateGate{MaxErrorRatio: 0.1, MinSamples: &n}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 4 || p.Steps[3] != 100 || p.Interval != 10*time.Minute || p.Gate.MinSamples != 3 || p.Gate.MaxErrorRatio != 0.1 || p.SpecHash == "" {
		t.Errorf("PlanOf = %+v", p)
	}
	q, _ := PlanOf(&katalog.Candidate{Endpoint: "http://d", Mode: "canary"})
	if q.SpecHash == p.SpecHash || q.Gate.MinSamples != DefaultMinSamples {
		t.Errorf("another spec: hash %s (first %s), minSamples %d", q.SpecHash, p.SpecHash, q.Gate.MinSamples)
	}
	if _, err := PlanOf(&katalog.Candidate{Mode: "canary", Canary: katalog.CanarySteps{Interval: "soon"}}); err == nil {
		t.Error("a bad interval gave a plan")
	}
}

func TestDescribe(t *testing.T) {
	p := Plan{Mode: ModeCanary, Steps: []int{10, 100}, Gate: Gate{MaxErrorRatio: 0.1, MaxDivergenceRatio: 0.5, MinSamples: 2}, SpecHash: "h"}
	if st := Describe("app", p, nil); st.Verdict != "pending" || st.Phase != "" || st.Recent == nil {
		t.Errorf("no state: %+v", st)
	}
	s := State{SpecHash: "h", Phase: Progressing, Step: 1, Window: Window{Samples: 4, Errors: 1, Compared: 4, Divergences: 1}}
	st := Describe("app", p, &s)
	if st.Percent != 100 || st.Verdict != "fails" || st.ErrorRatio != 0.25 || st.DivergenceRatio != 0.25 || st.Reason == "" || st.Stale {
		t.Errorf("failing window: %+v", st)
	}
	s.Window = Window{Samples: 4, Compared: 4}
	s.Phase = Complete
	if st := Describe("app", p, &s); st.Verdict != "holds" || !st.Promote {
		t.Errorf("complete: %+v", st)
	}
	s.SpecHash = "other"
	if st := Describe("app", p, &s); !st.Stale || st.Promote {
		t.Errorf("another spec's state: %+v", st)
	}
}
