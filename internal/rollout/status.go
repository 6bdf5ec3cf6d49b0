package rollout

// Status is a rollout as `ork rollout status` shows it: the state the engine last wrote,
// judged against the Katalog's plan. Its JSON is ork rollout status -o json: a contract.
type Status struct {
	CRD  string `json:"crd"`
	Mode Mode   `json:"mode"`
	// Phase is the state's phase; "" when the engine wrote no state yet.
	Phase   Phase `json:"phase,omitempty"`
	Step    int   `json:"step"`
	Percent int   `json:"percent"`
	// Stale is true when the state belongs to another candidate spec than the Katalog's:
	// ork run starts that rollout over.
	Stale           bool    `json:"stale,omitempty"`
	Samples         int     `json:"samples"`
	Errors          int     `json:"errors"`
	Compared        int     `json:"compared"`
	Divergences     int     `json:"divergences"`
	ErrorRatio      float64 `json:"errorRatio"`
	DivergenceRatio float64 `json:"divergenceRatio"`
	// Verdict is "pending", "holds" or "fails": the gate over the current window.
	Verdict string `json:"verdict"`
	// Reason says why the gate failed, or that the rollout completed.
	Reason string `json:"reason,omitempty"`
	// Promote is true when the gate held for an interval at 100%: make the candidate the
	// endpoint.
	Promote bool         `json:"promote"`
	Recent  []Divergence `json:"recentDivergences"`
}

// Describe is s under p, for the CRD named crd; s nil when no state was written yet.
func Describe(crd string, p Plan, s *State) Status {
	st := Status{CRD: crd, Mode: p.Mode, Verdict: "pending", Recent: []Divergence{}}
	if s == nil {
		return st
	}
	st.Phase, st.Step, st.Reason = s.Phase, s.Step, s.Reason
	st.Stale = s.SpecHash != p.SpecHash
	st.Percent = p.Percent(*s)
	w := s.Window
	st.Samples, st.Errors, st.Compared, st.Divergences = w.Samples, w.Errors, w.Compared, w.Divergences
	st.ErrorRatio, st.DivergenceRatio = w.ErrorRatio(), w.DivergenceRatio()
	switch v, why := p.Gate.Judge(w); {
	case s.Phase == RolledBack:
		st.Verdict = "fails"
	case v == Holds:
		st.Verdict = "holds"
	case v == Fails:
		st.Verdict, st.Reason = "fails", why
	}
	st.Promote = s.Phase == Complete && !st.Stale
	if s.Divergences != nil {
		st.Recent = s.Divergences
	}
	return st
}
