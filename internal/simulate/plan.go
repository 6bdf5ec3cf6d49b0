package simulate

// Plan is ork simulate -o plan: the report without the objects, in a shape for CI
// assertions (jq '.steady', '.crds[0].crs[0].cycles[0].changes'). It is a contract: every
// key is always present, lists are [] and strings "" when empty.
type Plan struct {
	// Steady: every simulated custom resource reached steady state without an error.
	Steady bool      `json:"steady"`
	CRDs   []PlanCRD `json:"crds"`
}

// PlanCRD is one CRD of the plan.
type PlanCRD struct {
	Name string `json:"name"`
	// Skipped is why the CRD was not simulated ("remote", "disabled", "no-crs"); "" when it
	// was.
	Skipped Skip     `json:"skipped"`
	CRs     []PlanCR `json:"crs"`
}

// PlanCR is one custom resource of the plan.
type PlanCR struct {
	File      string      `json:"file"`
	Namespace string      `json:"namespace"`
	Name      string      `json:"name"`
	Ref       string      `json:"ref"`
	Cycles    []PlanCycle `json:"cycles"`
	// Steady: two cycles in a row changed nothing; SteadyAt is the second of them, 0 when
	// the cycle limit came first or the reconcile failed.
	Steady   bool         `json:"steady"`
	SteadyAt int          `json:"steadyAt"`
	OnDelete []PlanChange `json:"onDelete"`
	// Error is why the CR's reconcile failed; "" when it did not.
	Error string `json:"error"`
	// Operations are the long-running operations the CR waited on, as CR.Operations.
	Operations []Operation `json:"operations"`
}

// PlanCycle is what one reconcile cycle created, changed or deleted.
type PlanCycle struct {
	N       int          `json:"n"`
	Changes []PlanChange `json:"changes"`
}

// PlanChange is one object's change: op is "create", "update" or "delete", ref names the
// object as "deployments/my-site" ("websites/my-site/status" for a status write).
type PlanChange struct {
	Op  string `json:"op"`
	Ref string `json:"ref"`
}

// Plan returns the report as a Plan.
func (r Report) Plan() Plan {
	p := Plan{Steady: true, CRDs: make([]PlanCRD, 0, len(r.CRDs))}
	for _, c := range r.CRDs {
		pc := PlanCRD{Name: c.Name, Skipped: c.Skipped, CRs: make([]PlanCR, 0, len(c.CRs))}
		for _, cr := range c.CRs {
			x := PlanCR{File: cr.File, Namespace: cr.Namespace, Name: cr.Name, Ref: cr.Ref,
				Cycles: make([]PlanCycle, 0, len(cr.Cycles)), Steady: cr.SteadyAt > 0 && cr.Err == "",
				SteadyAt: cr.SteadyAt, OnDelete: planChanges(cr.OnDelete), Error: cr.Err,
				Operations: append(make([]Operation, 0, len(cr.Operations)), cr.Operations...)}
			for _, cy := range cr.Cycles {
				x.Cycles = append(x.Cycles, PlanCycle{N: cy.N, Changes: planChanges(cy.Changes)})
			}
			p.Steady = p.Steady && x.Steady
			pc.CRs = append(pc.CRs, x)
		}
		p.CRDs = append(p.CRDs, pc)
	}
	return p
}

func planChanges(cs []Change) []PlanChange {
	out := make([]PlanChange, 0, len(cs))
	for _, c := range cs {
		out = append(out, PlanChange{Op: c.Op.Word(), Ref: c.Ref})
	}
	return out
}

// Word is the op as a word: create, update, delete.
func (o Op) Word() string {
	switch o {
	case Create:
		return "create"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return string(o)
}
