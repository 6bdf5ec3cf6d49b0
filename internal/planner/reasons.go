package planner

import (
	"fmt"
	"strings"

	"github.com/orkspace/ork/internal/resources"
)

// Reasons of a Ready condition that the planning rules decide.
const (
	// ReasonInvalidResource: an entry the builders reject, or one ork cannot place (a
	// namespace it may not write, a controller reference of the reconciler's own).
	ReasonInvalidResource = "InvalidResource"
	// ReasonApplyFailed: every entry built, but a type is not declared in managedResources
	// or not served by the cluster; ork run uses it for its failed writes too.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonAlreadyOwned: a child another object controls.
	ReasonAlreadyOwned = "AlreadyOwned"
	// ReasonOperatorConflict: a child labelled as another operator's (another ork --name).
	ReasonOperatorConflict = "OperatorConflict"
)

// Failure is a refusal with the reason the custom resource's Ready condition carries.
type Failure struct {
	Reason, Message string
}

func (f *Failure) Error() string { return f.Message }

func fail(reason, format string, a ...any) *Failure {
	return &Failure{Reason: reason, Message: fmt.Sprintf(format, a...)}
}

// Stage says which rule refused an entry.
type Stage int

const (
	// Invalid: the intent builders rejected the entry.
	Invalid Stage = iota
	// Undeclared: the entry built, but its type is not in managedResources.
	Undeclared
	// Unserved: the entry built, but the cluster serves no such kind, or discovery could not
	// tell (ork run only).
	Unserved
	// Unplaceable: the entry built and is declared, but ork cannot place it (see
	// ReasonInvalidResource).
	Unplaceable
)

// EntryError is the problem of one entry of an answer's resources (or of a declarative
// CRD's onReconcile or onCreate objects).
type EntryError struct {
	// List names the entry's list: "resources" (an answer's, or onReconcile's), "onCreate".
	List string
	// Index is the entry's position in List.
	Index int
	Stage Stage
	Err   error
}

// Error reads "resources[1]: ..." (a builder error names its entry and type itself).
func (e EntryError) Error() string {
	at := fmt.Sprintf("%s[%d]", e.List, e.Index)
	if e.Stage == Invalid {
		return resources.AtEntry(e.Err, at).Error()
	}
	return at + ": " + e.Err.Error()
}

func (e EntryError) Unwrap() error { return e.Err }

// Verdict is the Failure of entries ork would not apply, nil for none. ork checks every
// entry's form first and applies nothing of an answer with an invalid entry
// (InvalidResource, naming those entries); then the built objects' placement, where an
// entry it cannot place is InvalidResource too and a type undeclared or not served, alone,
// ApplyFailed (each naming every refused entry).
func Verdict(errs []EntryError) *Failure {
	if len(errs) == 0 {
		return nil
	}
	var invalid, planned []string
	reason := ReasonApplyFailed
	for _, e := range errs {
		switch e.Stage {
		case Invalid:
			invalid = append(invalid, e.Error())
		case Unplaceable:
			reason = ReasonInvalidResource
			planned = append(planned, e.Error())
		default:
			planned = append(planned, e.Error())
		}
	}
	if len(invalid) > 0 {
		return fail(ReasonInvalidResource, "nothing applied: %s", strings.Join(invalid, "; "))
	}
	return fail(reason, "nothing applied: %s", strings.Join(planned, "; "))
}
