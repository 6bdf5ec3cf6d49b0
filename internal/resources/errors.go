package resources

import (
	"errors"
	"fmt"
)

// FieldError is a problem with one field of one entry. Build returns it for every invalid
// entry, so callers can say where the entry came from (see AtEntry).
type FieldError struct {
	// Entry locates the entry for the reader, set by the caller: "resources[1]".
	Entry string
	// Type is the intent type ("service"), the kind of a full object, or empty when unknown.
	Type string
	// Field is the field's path inside the entry ("port", "resources.limits.cpu"); empty when
	// the problem is the entry as a whole.
	Field string
	Msg   string
}

// Error reads `resources[1] (service): field "port": expected an integer, got a list`.
func (e *FieldError) Error() string {
	s := e.Entry
	switch {
	case s != "" && e.Type != "":
		s += " (" + e.Type + ")"
	case e.Type != "":
		s = e.Type
	}
	if e.Field != "" {
		if s != "" {
			s += ": "
		}
		s += fmt.Sprintf("field %q", e.Field)
	}
	if s == "" {
		return e.Msg
	}
	return s + ": " + e.Msg
}

// AtEntry names where the entry behind err came from ("resources[1]"): a FieldError gets it
// as its Entry (on a copy), any other error is wrapped with it.
func AtEntry(err error, entry string) error {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		c := *fe
		c.Entry = entry
		return &c
	}
	return fmt.Errorf("%s: %w", entry, err)
}
