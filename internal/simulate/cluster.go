package simulate

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/declarative"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/resources"
)

// key identifies an object in the cluster; the version is left out, as the API server
// serves one object under every version of its kind.
type key struct {
	gk              schema.GroupKind
	namespace, name string
}

func keyOf(u *unstructured.Unstructured) key {
	return key{u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName()}
}

// cluster is an in-memory stand-in for the API server: objects by key, in the order they
// appeared, with server-side apply approximated as a deep merge of the applied fields.
type cluster struct {
	objs  map[key]*unstructured.Unstructured
	order []key
	names namer
}

func newCluster(seed []*unstructured.Unstructured, names namer) *cluster {
	c := &cluster{objs: map[key]*unstructured.Unstructured{}, names: names}
	for _, u := range seed {
		if u.GetNamespace() == "" && names.namespaced(u) {
			u.SetNamespace("default")
		}
		c.put(u)
	}
	return c
}

func (c *cluster) get(k key) *unstructured.Unstructured { return c.objs[k] }

func (c *cluster) put(u *unstructured.Unstructured) {
	k := keyOf(u)
	if _, ok := c.objs[k]; !ok {
		c.order = append(c.order, k)
	}
	c.objs[k] = u
}

// objects returns deep copies of every object, in the order they appeared.
func (c *cluster) objects() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, c.objs[k].DeepCopy())
	}
	return out
}

// reconcile carries out one declarative pass: onCreate objects are created when missing,
// onReconcile objects are applied.
func (c *cluster) reconcile(p declarative.Plan) []Change {
	var changes []Change
	for _, o := range p.CreateIfMissing {
		if c.get(keyOf(o.Obj)) == nil {
			c.put(o.Obj.DeepCopy())
			changes = append(changes, Change{Create, c.names.ref(o.Obj)})
		}
	}
	for _, o := range p.Apply {
		cur := c.get(keyOf(o.Obj))
		if cur == nil {
			c.put(o.Obj.DeepCopy())
			changes = append(changes, Change{Create, c.names.ref(o.Obj)})
			continue
		}
		next := cur.DeepCopy()
		merge(next.Object, o.Obj.DeepCopy().Object)
		if !reflect.DeepEqual(next.Object, cur.Object) {
			c.put(next)
			changes = append(changes, Change{Update, c.names.ref(o.Obj)})
		}
	}
	return changes
}

// deletions are the onDelete objects that exist, i.e. what deleting the CR would remove.
func (c *cluster) deletions(p declarative.Plan) []Change {
	var changes []Change
	for _, o := range p.Delete {
		if c.get(keyOf(o.Obj)) != nil {
			changes = append(changes, Change{Delete, c.names.ref(o.Obj)})
		}
	}
	return changes
}

// merge applies src over dst: mappings merge key by key, anything else is replaced. Like
// server-side apply it never drops a field the applier did not mention.
func merge(dst, src map[string]any) {
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			merge(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// namer knows the scope and plural of the kinds simulate meets: the built-in types and the
// Katalog's CRDs.
type namer struct {
	crds []*katalog.CRD
	// types resolves scopes as the planner does offline.
	types planner.Types
}

func newNamer(crds []*katalog.CRD) namer {
	return namer{crds: crds, types: planner.NewTypes(nil, crds)}
}

func (n namer) crd(gk schema.GroupKind) *katalog.CRD {
	for _, c := range n.crds {
		if c.APITypes != nil && c.APITypes.Group == gk.Group && c.APITypes.Kind == gk.Kind {
			return c
		}
	}
	return nil
}

// namespaced reports whether u's kind is namespaced, as the planner decides offline: a kind
// of unknown scope counts as namespaced.
func (n namer) namespaced(u *unstructured.Unstructured) bool {
	namespaced, _ := n.types.Namespaced(u.GroupVersionKind().GroupKind())
	return namespaced
}

// ref names an object as kubectl does: "deployments/my-site", or "kind.group/name" for a
// kind whose plural is unknown here.
func (n namer) ref(u *unstructured.Unstructured) string {
	gk := u.GroupVersionKind().GroupKind()
	if t, ok := resources.LookupKind(gk); ok {
		return t.Plural + "/" + u.GetName()
	}
	if c := n.crd(gk); c != nil && c.APITypes.Plural != "" {
		return c.APITypes.Plural + "/" + u.GetName()
	}
	res := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		res += "." + gk.Group
	}
	return res + "/" + u.GetName()
}

// owned returns deep copies of the objects cr controls, in the order they appeared.
func (c *cluster) owned(cr *unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, k := range c.order {
		if o := c.objs[k]; cr.GetUID() != "" && planner.ControlledBy(cr, o) {
			out = append(out, o.DeepCopy())
		}
	}
	return out
}

// ownedBy is what the garbage collector would remove with cr: the objects it controls.
func (c *cluster) ownedBy(cr *unstructured.Unstructured) []Change {
	var changes []Change
	for _, o := range c.owned(cr) {
		changes = append(changes, Change{Delete, c.names.ref(o)})
	}
	return changes
}

// writeStatus merges status into the CR's as ork run does (a JSON merge patch: null
// removes a key), with observedGeneration and a Ready condition, and reports whether the
// CR changed. lastTransitionTime is left out of the condition: a simulation has no clock.
func (c *cluster) writeStatus(k key, status map[string]any) bool {
	return c.writeStatusOf(k, status, conditions{})
}

// conditions are those of an answer about a long-running operation; the zero value is a
// plain success.
type conditions struct {
	// pending is the Ready message while an operation is held: Ready False with reason
	// OperationPending, Progressing True, and observedGeneration stays.
	pending string
	// ended is the Progressing message once an operation ended (Progressing False).
	ended string
}

// writeStatusOf is writeStatus with the conditions of an operation, as ork run sets them.
func (c *cluster) writeStatusOf(k key, status map[string]any, cs conditions) bool {
	cur := c.get(k)
	next := cur.DeepCopy()
	st, _ := next.Object["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	mergePatch(st, runtime.DeepCopyJSON(status))
	gen := cur.GetGeneration()
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded", "message": "reconciled", "observedGeneration": gen}
	conds, _ := st["conditions"].([]any)
	switch {
	case cs.pending != "":
		ready = map[string]any{"type": "Ready", "status": "False", "reason": operation.ReasonPending, "message": cs.pending, "observedGeneration": gen}
		conds = setCondition(conds, map[string]any{"type": operation.ConditionProgressing, "status": "True", "reason": operation.ReasonPending,
			"message": cs.pending, "observedGeneration": gen})
	case cs.ended != "":
		st["observedGeneration"] = gen
		conds = setCondition(conds, map[string]any{"type": operation.ConditionProgressing, "status": "False", "reason": "OperationCompleted",
			"message": cs.ended, "observedGeneration": gen})
	default:
		st["observedGeneration"] = gen
	}
	st["conditions"] = setCondition(conds, ready)
	next.Object["status"] = st
	if reflect.DeepEqual(next.Object, cur.Object) {
		return false
	}
	c.put(next)
	return true
}

// setCondition replaces the condition of cond's type in conds, or appends it.
func setCondition(conds []any, cond map[string]any) []any {
	i := slices.IndexFunc(conds, func(c any) bool { m, _ := c.(map[string]any); return m["type"] == cond["type"] })
	if i >= 0 {
		conds[i] = cond
		return conds
	}
	return append(conds, cond)
}

// mergePatch applies a JSON merge patch (RFC 7386) to dst.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
			continue
		}
		pm, pok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if pok && dok {
			mergePatch(dm, pm)
			continue
		}
		if pok {
			fresh := map[string]any{}
			mergePatch(fresh, pm)
			v = fresh
		}
		dst[k] = v
	}
}
