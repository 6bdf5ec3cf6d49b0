package managed

import (
	"fmt"
	"strings"

	"github.com/orkspace/ork/internal/resources"
)

// Verdicts of a remote answer's resources that ork would not apply, as ork run's Ready
// condition says them.
const (
	ReasonInvalidResource = "InvalidResource"
	ReasonApplyFailed     = "ApplyFailed"
)

// EntryError is the problem of one entry of an answer's resources.
type EntryError struct {
	// Index is the entry's position in resources.
	Index int
	// Undeclared: the entry built, but its type is not in managedResources.
	Undeclared bool
	Err        error
}

// Error reads "resources[1]: ..." (a builder error names its entry and type itself).
func (e EntryError) Error() string {
	if e.Undeclared {
		return fmt.Sprintf("resources[%d]: %v", e.Index, e.Err)
	}
	return resources.AtEntry(e.Err, fmt.Sprintf("resources[%d]", e.Index)).Error()
}

// Build builds every entry of a remote answer for the custom resource namespace/name, as
// ork run does before applying anything: each entry by the intent builders, each type
// against managedResources. It returns the objects, or nil and every problem when ork would
// apply nothing.
func (t Types) Build(entries []map[string]any, namespace, name string) ([]resources.Object, []EntryError) {
	opts := resources.OptionsFor(namespace, name)
	objs := make([]resources.Object, 0, len(entries))
	var errs []EntryError
	for i, raw := range entries {
		o, err := resources.Build(raw, opts)
		if err != nil {
			errs = append(errs, EntryError{Index: i, Err: err})
			continue
		}
		if err := t.Check(o); err != nil {
			errs = append(errs, EntryError{Index: i, Undeclared: true, Err: err})
			continue
		}
		objs = append(objs, o)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return objs, nil
}

// Verdict is the Ready reason and message of a Build that failed: ork run checks every
// entry's form first (InvalidResource), the types only then (ApplyFailed).
func Verdict(errs []EntryError) (reason, message string) {
	var invalid, undeclared []string
	for _, e := range errs {
		if e.Undeclared {
			undeclared = append(undeclared, e.Error())
		} else {
			invalid = append(invalid, e.Error())
		}
	}
	if len(invalid) > 0 {
		return ReasonInvalidResource, "nothing applied: " + strings.Join(invalid, "; ")
	}
	return ReasonApplyFailed, "nothing applied: " + strings.Join(undeclared, "; ")
}
