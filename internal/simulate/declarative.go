package simulate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/declarative"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/resources"
)

// declarativeCRD plans the CRs of one declarative CRD as ork run does: the objects its blocks
// render, placed, owned and labelled by the planner, against the types of its blocks.
type declarativeCRD struct {
	rec     *declarative.Reconciler
	types   planner.Types
	planner planner.Planner
}

func newDeclarativeCRD(c *katalog.CRD, set *katalog.Set, operator string) *declarativeCRD {
	types := planner.NewTypes(c, set.CRDs)
	types.Operator = operator
	return &declarativeCRD{rec: declarative.New(c), types: types, planner: types.Planner(c.OperatorBox.Reconcile.ForceConflict)}
}

// plan renders cr's blocks and plans them all or nothing; a refusal is an error with the
// reason ork run would set on the CR. onDelete's objects are placed as onDelete places them.
func (d *declarativeCRD) plan(cr *unstructured.Unstructured) (declarative.Plan, error) {
	p, err := d.rec.Desired(cr.DeepCopy().Object, resources.Options{})
	if err != nil {
		return declarative.Plan{}, err
	}
	children, errs := d.planner.Plan(cr, p.Apply, p.CreateIfMissing)
	if f := planner.Verdict(errs); f != nil {
		return declarative.Plan{}, fmt.Errorf("%s: %s", f.Reason, f.Message)
	}
	out := declarative.Plan{Delete: p.Delete}
	for _, c := range children {
		o := resources.Object{Obj: c.Obj}
		if c.CreateOnly {
			out.CreateIfMissing = append(out.CreateIfMissing, o)
		} else {
			out.Apply = append(out.Apply, o)
		}
	}
	for _, o := range out.Delete {
		m, _ := d.types.Map(o.Obj.GroupVersionKind()) // offline Map never fails
		switch {
		case !m.Namespaced:
			o.Obj.SetNamespace("")
		case o.Obj.GetNamespace() == "":
			o.Obj.SetNamespace(cr.GetNamespace())
		}
	}
	return out, nil
}
