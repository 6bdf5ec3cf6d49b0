package remote

// Outcomes of applying one resource of a result, sent in prepared.lastApply.
const (
	// OutcomeApplied: ork's apply created or changed the object.
	OutcomeApplied = "applied"
	// OutcomeUnchanged: the object already was what the result asked for.
	OutcomeUnchanged = "unchanged"
	// OutcomeConflict: another field manager owns a field the entry sets and force was off
	// (forceConflict: false); ConflictingManagers names them.
	OutcomeConflict = "conflict"
	// OutcomeError: not applied; Message says why (the apiserver's refusal, a child another
	// owner controls, an invalid entry, or an earlier entry's failure).
	OutcomeError = "error"
)

// AppliedResource is what applying one resource of the previous result did: an entry of
// prepared.lastApply (payload.lastApply). An intent entry is named by Type, a full object
// by APIVersion and Kind, as the result named it.
type AppliedResource struct {
	Type                string   `json:"type,omitempty"`
	APIVersion          string   `json:"apiVersion,omitempty"`
	Kind                string   `json:"kind,omitempty"`
	Name                string   `json:"name"`
	Namespace           string   `json:"namespace,omitempty"`
	Outcome             string   `json:"outcome"`
	Message             string   `json:"message,omitempty"`
	ConflictingManagers []string `json:"conflictingManagers,omitempty"`
}
