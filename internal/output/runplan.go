package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/orkspace/ork/internal/runplan"
)

// RunPlanReport is the machine-readable shape of ork run --dry-run -o json: a contract.
type RunPlanReport struct {
	CRs []runplan.CR `json:"crs"`
}

// RunPlan prints what ork run --dry-run would change: a block per custom resource, then a
// summary line.
func RunPlan(w io.Writer, st Style, crs []runplan.CR) error {
	var b strings.Builder
	var changing, failing, notCalled int
	for _, cr := range crs {
		writeCR(&b, st, cr)
		switch {
		case !cr.Success:
			failing++
		case !called(cr):
			notCalled++
		case len(cr.Changes) > 0:
			changing++
		}
	}
	fmt.Fprintf(&b, "%s: %d would change, %d unchanged, %d failing, %d not called\n",
		plural(len(crs), "custom resource"), changing, len(crs)-changing-failing-notCalled, failing, notCalled)
	_, err := io.WriteString(w, b.String())
	return err
}

// RunPlanCR prints one custom resource's block, as each pass ends (ork run --dry-run
// --watch).
func RunPlanCR(w io.Writer, st Style, cr runplan.CR) error {
	var b strings.Builder
	writeCR(&b, st, cr)
	_, err := io.WriteString(w, b.String())
	return err
}

// RunPlanJSON prints the RunPlanReport contract.
func RunPlanJSON(w io.Writer, crs []runplan.CR) error {
	if crs == nil {
		crs = []runplan.CR{}
	}
	return WriteJSON(w, RunPlanReport{CRs: crs})
}

// RunPlanJSONLine prints one custom resource's plan as one line of JSON (--watch -o json).
func RunPlanJSONLine(w io.Writer, cr runplan.CR) error {
	b, err := json.Marshal(cr)
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func called(cr runplan.CR) bool { return cr.Reason != "BeingDeleted" && !cr.Suspended }

// writeCR writes "webapp default/web (create): would change" and a line per change.
func writeCR(b *strings.Builder, st Style, cr runplan.CR) {
	name := cr.Name
	if cr.Namespace != "" {
		name = cr.Namespace + "/" + cr.Name
	}
	head := fmt.Sprintf("%s %s (%s)", st.Bold(cr.CRD), name, cr.Trigger)
	switch {
	case !called(cr):
		fmt.Fprintf(b, "%s: %s\n", head, st.Dim(cr.Message))
		return
	case !cr.Success:
		fmt.Fprintf(b, "%s: %s\n", head, st.Error(cr.Reason)+": "+cr.Message)
	case len(cr.Changes) == 0:
		fmt.Fprintf(b, "%s: %s\n", head, st.Dim("no change"))
	default:
		fmt.Fprintf(b, "%s: would change\n", head)
	}
	for _, ch := range cr.Changes {
		b.WriteString("  " + change(st, cr, ch) + "\n")
	}
}

func change(st Style, cr runplan.CR, ch runplan.Change) string {
	ref := ch.Ref
	if ch.Namespace != "" && ch.Namespace != cr.Namespace {
		ref += " in " + ch.Namespace
	}
	fields := ""
	if len(ch.Fields) > 0 {
		fields = ": " + strings.Join(ch.Fields, ", ")
	}
	switch ch.Action {
	case runplan.Create:
		return st.OK("+") + " " + ref
	case runplan.AddFinalizer:
		return st.OK("+") + " finalizer " + ref
	case runplan.RemoveFinalizer:
		return st.Error("-") + " finalizer " + ref
	case runplan.Prune:
		return st.Error("-") + " " + ref + st.Dim(" (pruned)")
	case runplan.Delete:
		return st.Error("-") + " " + ref
	}
	return st.Warning("~") + " " + ref + fields
}
