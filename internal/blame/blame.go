package blame

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/naming"
)

// Logged is an entry of the decision log with its line (1-based).
type Logged struct {
	Line  int
	Entry decision.Entry
}

// Query is what Blame is asked.
type Query struct {
	// Child is the object, as read with its managedFields.
	Child *unstructured.Unstructured
	// Owner is the custom resource that controls Child; nil when it cannot be read.
	Owner *unstructured.Unstructured
	// Log holds the decision log's entries in file order, and HasLog says one was given
	// (an empty log is still a log).
	Log    []Logged
	HasLog bool
	// Field is the path, as spec.template.spec.containers[0].image.
	Field string
	// FieldManager is ork's field manager; default naming.FieldManager.
	FieldManager string
}

// Source says where the decision of an Answer was found.
const (
	SourceLog        = "log"        // the latest entry of the log that changed the field
	SourceAnnotation = "annotation" // the child's decision annotation: the last decision that wrote the child
)

// Answer is who holds the field and which decision of ork's set it.
type Answer struct {
	Object decision.Ref `json:"object"`
	Field  string       `json:"field"`
	// Owners are the managers that own the field now, most recent first.
	Owners []Manager `json:"owners"`
	// ByOrk says ork's field manager is one of them.
	ByOrk bool `json:"byOrk"`
	// ChangedBy is the most recent other manager that holds the field when ork does not:
	// it changed the field after ork's decision.
	ChangedBy *Manager `json:"changedBy,omitempty"`
	// Decision is the id of ork's decision that set the field (Source log) or last wrote
	// the child (Source annotation); empty when neither is known.
	Decision string    `json:"decision,omitempty"`
	Source   string    `json:"source,omitempty"`
	Time     time.Time `json:"time,omitzero"`
	Trigger  string    `json:"trigger,omitempty"`
	// Generation and ResourceVersion are the custom resource's in the decision's entry
	// (decision.Object; from the log only).
	Generation      int64               `json:"generation,omitempty"`
	ResourceVersion string              `json:"resourceVersion,omitempty"`
	Related         []decision.Related  `json:"related,omitempty"`
	Reconciler      decision.Reconciler `json:"reconciler,omitzero"`
	LogLine         int                 `json:"logLine,omitempty"`
	Notes           []string            `json:"notes,omitempty"`
}

// Blame answers q.
func Blame(q Query) (Answer, error) {
	if q.Child == nil {
		return Answer{}, fmt.Errorf("blame: no object")
	}
	if q.FieldManager == "" {
		q.FieldManager = naming.FieldManager
	}
	path, err := decision.ParsePath(q.Field)
	if err != nil {
		return Answer{}, fmt.Errorf("blame: %w", err)
	}
	a := Answer{Object: refOf(q.Child), Field: path.String()}
	if a.Owners, err = owners(q.Child.GetManagedFields(), q.Child.Object, path); err != nil {
		return Answer{}, fmt.Errorf("blame %s: %w", a.Object, err)
	}
	for i, o := range a.Owners {
		if o.Manager == q.FieldManager {
			a.ByOrk = true
		} else if a.ChangedBy == nil {
			a.ChangedBy = &a.Owners[i]
		}
	}
	if a.ByOrk {
		a.ChangedBy = nil
	}
	if len(a.Owners) == 0 {
		a.Notes = append(a.Notes, "no field manager owns the field: it is not set, or only the apiserver's defaults set it")
	}

	annotation := q.Child.GetAnnotations()[decision.Annotation]
	if q.HasLog {
		if l, dropped, ok := fromLog(q.Log, a.Object, path); ok {
			a.setFromLog(l)
			if dropped {
				a.Notes = append(a.Notes, fmt.Sprintf("the entry at line %d left out its field paths (too long a line): it wrote the object, but whether it set this field is not recorded", l.Line))
			}
			return a, nil
		}
		a.Notes = append(a.Notes, "no entry of the decision log changed the field: it was set before the log began, or by another manager")
	}
	if annotation == "" {
		a.Notes = append(a.Notes, fmt.Sprintf("the object carries no %s annotation: no decision of ork's wrote it since ork records decisions", decision.Annotation))
		return a, nil
	}
	a.Decision, a.Source = annotation, SourceAnnotation
	if t, err := decision.IDTime(annotation); err == nil {
		a.Time = t
	}
	if !q.HasLog {
		a.Notes = append(a.Notes, "the annotation names the last decision that wrote the object, not necessarily the one that set this field: per-field answers need the decision log (--decision-log)")
	}
	a.fromOwner(q.Owner)
	return a, nil
}

// fromOwner completes an answer from the annotation with the owner's lastDecision, when it
// is the same decision.
func (a *Answer) fromOwner(owner *unstructured.Unstructured) {
	if owner == nil {
		a.Notes = append(a.Notes, "the owning custom resource could not be read: the decision's trigger is unknown")
		return
	}
	last, ok, err := decision.FromStatus(owner)
	switch {
	case err != nil:
		a.Notes = append(a.Notes, fmt.Sprintf("the custom resource's status.%s is unreadable: %v", decision.StatusField, err))
	case !ok:
		a.Notes = append(a.Notes, fmt.Sprintf("the custom resource has no status.%s", decision.StatusField))
	case last.ID == a.Decision:
		a.Time, a.Trigger, a.Reconciler = last.Time, last.Trigger, last.Reconciler
	default:
		a.Notes = append(a.Notes, fmt.Sprintf("the custom resource's last decision is %s, a later pass that did not write this object: the trigger of %s is in the decision log only", last.ID, a.Decision))
	}
}

func (a *Answer) setFromLog(l Logged) {
	e := l.Entry
	a.Decision, a.Source, a.LogLine = e.Decision, SourceLog, l.Line
	a.Time, a.Trigger, a.Reconciler = e.Time, e.Trigger, e.Reconciler
	a.Generation, a.ResourceVersion, a.Related = e.Object.Generation, e.Object.ResourceVersion, e.Related
}

// fromLog is the latest entry that changed the field of the object (a path equal to it,
// above it or below it), or that wrote the object without recording its field paths.
func fromLog(log []Logged, obj decision.Ref, p decision.Path) (l Logged, dropped, ok bool) {
	for i := len(log) - 1; i >= 0; i-- {
		for _, c := range log[i].Entry.Children {
			if !sameObject(c.Ref, obj) || (c.Outcome != decision.ChildCreated && c.Outcome != decision.ChildApplied) {
				continue
			}
			if log[i].Entry.FieldsDropped {
				return log[i], true, true
			}
			for _, f := range c.Fields.Paths() {
				fp, err := decision.ParsePath(f)
				if err == nil && (fp.HasPrefix(p) || p.HasPrefix(fp)) {
					return log[i], false, true
				}
			}
		}
	}
	return Logged{}, false, false
}

// Concerns reports whether e wrote or tried to write the object: the entries Blame needs.
func Concerns(e decision.Entry, obj decision.Ref) bool {
	for _, c := range e.Children {
		if sameObject(c.Ref, obj) {
			return true
		}
	}
	return false
}

// RefOf names an object.
func RefOf(u *unstructured.Unstructured) decision.Ref { return refOf(u) }

// sameObject compares group, kind, namespace and name: the version an object is read at
// does not make it another object.
func sameObject(a, b decision.Ref) bool {
	ga, _ := schema.ParseGroupVersion(a.APIVersion)
	gb, _ := schema.ParseGroupVersion(b.APIVersion)
	return ga.Group == gb.Group && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

func refOf(u *unstructured.Unstructured) decision.Ref {
	return decision.Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Summary is the answer in one sentence, as ork blame prints it first.
func (a Answer) Summary() string {
	by := ""
	if a.Decision != "" {
		by = fmt.Sprintf(" ork's decision %s", a.Decision)
	}
	switch {
	case a.ChangedBy != nil:
		s := fmt.Sprintf("%s was changed by %s", a.Field, a.ChangedBy.Manager)
		if a.ChangedBy.Time != nil {
			s += " at " + a.ChangedBy.Time.UTC().Format(time.RFC3339)
		}
		if by != "" {
			s += " since" + by
		}
		return s
	case !a.ByOrk:
		if by != "" {
			return fmt.Sprintf("%s is owned by no field manager; the object was last written by%s", a.Field, by)
		}
		return fmt.Sprintf("%s is owned by no field manager", a.Field)
	case a.Source == SourceLog:
		return fmt.Sprintf("%s was set by%s", a.Field, by)
	case by != "":
		return fmt.Sprintf("%s is held by ork; the object was last written by%s", a.Field, by)
	}
	return fmt.Sprintf("%s is held by ork; no decision of ork's is recorded for it", a.Field)
}
