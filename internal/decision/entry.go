package decision

import (
	"fmt"
	"regexp"
	"time"
)

// Ref names an object: no field of it can hold a value of the object.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Object is the custom resource a decision was made for: the generation the pass read, and
// its resourceVersion after the pass's own writes to it (ork's finalizer, the operation
// annotation, the status), or as read when the pass wrote none.
type Object struct {
	Ref
	Generation      int64  `json:"generation"`
	ResourceVersion string `json:"resourceVersion"`
}

// Related is one related object the pass read, by the name the request gives it.
type Related struct {
	Name            string `json:"name"`
	Ref             Ref    `json:"ref"`
	ResourceVersion string `json:"resourceVersion"`
}

// Child outcomes.
const (
	ChildCreated   = "created"
	ChildApplied   = "applied"
	ChildUnchanged = "unchanged" // the apply was skipped: the child already held what ork would write
	ChildDeleted   = "deleted"
	ChildFailed    = "failed"
)

// Child is what a pass did to one child: its resourceVersion before and after the write
// and the paths of the fields that changed, never their values.
type Child struct {
	Ref                   Ref    `json:"ref"`
	ResourceVersionBefore string `json:"resourceVersionBefore,omitempty"`
	ResourceVersionAfter  string `json:"resourceVersionAfter,omitempty"`
	Fields                Fields `json:"fields"`
	Outcome               string `json:"outcome"`
	// Reason is a CamelCase reason code of a failure (Conflict, Invalid, Forbidden).
	Reason string `json:"reason,omitempty"`
}

// Entry is one line of the decision log: one pass of one custom resource.
type Entry struct {
	Decision string    `json:"decision"`
	Time     time.Time `json:"time"`
	Object   Object    `json:"object"`
	// Target is the cluster of the pass's children, as in LastDecision; empty for the
	// cluster ork runs in.
	Target   string    `json:"target,omitempty"`
	Trigger  string    `json:"trigger"`
	Inputs   string    `json:"inputs,omitempty"`
	Related  []Related `json:"related,omitempty"`
	Children []Child   `json:"children,omitempty"`
	// Outcome of the pass: ok, requeue, pending, error, or skipped (answered, not applied:
	// the CR was replaced or suspended during the call).
	Outcome string `json:"outcome"`
	// Reason is a CamelCase reason code of an error outcome.
	Reason     string     `json:"reason,omitempty"`
	Reconciler Reconciler `json:"reconciler,omitzero"`
	// FieldsDropped is set when the children's field paths were left out to keep the line
	// within the log's bound.
	FieldsDropped bool `json:"fieldsDropped,omitempty"`
	// Prev is the hash of the log's previous line; empty on its first.
	Prev string `json:"prev"`
	// Hash chains the line to Prev; the log sets it.
	Hash string `json:"hash,omitempty"`
}

// reason is the shape of every reason code: free text could carry a value.
var reason = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,63}$`)

// Check refuses an entry whose free-form-looking fields are not what they are for: a reason
// that is not a reason code, a decision that is not a decision id.
func (e Entry) Check() error {
	if !ValidID(e.Decision) {
		return fmt.Errorf("entry: decision %q is not a decision id", e.Decision)
	}
	if e.Reason != "" && !reason.MatchString(e.Reason) {
		return fmt.Errorf("entry %s: reason %q is not a CamelCase reason code", e.Decision, e.Reason)
	}
	for _, c := range e.Children {
		if c.Reason != "" && !reason.MatchString(c.Reason) {
			return fmt.Errorf("entry %s: child %s: reason %q is not a CamelCase reason code", e.Decision, c.Ref, c.Reason)
		}
	}
	return nil
}

// DropFields is e without the children's field paths, marked FieldsDropped.
func (e Entry) DropFields() Entry {
	children := make([]Child, len(e.Children))
	for i, c := range e.Children {
		c.Fields = Fields{}
		children[i] = c
	}
	e.Children = children
	e.FieldsDropped = true
	return e
}
