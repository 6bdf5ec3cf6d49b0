// Package runplan is what ork run --dry-run would change, per custom resource: data the
// engine fills and internal/output prints.
package runplan

import (
	"cmp"
	"slices"
)

// Action is one kind of change.
type Action string

// Actions, as the plan names them.
const (
	// Create: the child does not exist; applying it would create it.
	Create Action = "create"
	// Update: applying the child would change Fields.
	Update Action = "update"
	// Prune: the answer no longer lists the child (reconcile.remote.prune).
	Prune Action = "prune"
	// Delete: a declarative onDelete object.
	Delete Action = "delete"
	// Status: the custom resource's status would change in Fields.
	Status Action = "status"
	// AddFinalizer and RemoveFinalizer: ork's finalizer on the custom resource.
	AddFinalizer    Action = "add-finalizer"
	RemoveFinalizer Action = "remove-finalizer"
)

// Change is one write ork would make.
type Change struct {
	Action Action `json:"action"`
	// Ref is the object: "deployments/web", "status" for the custom resource's status, the
	// finalizer's name for a finalizer change.
	Ref string `json:"ref"`
	// Namespace is the child's, when it has one.
	Namespace string `json:"namespace,omitempty"`
	// Fields are the changed field paths of an update, or the status fields written.
	Fields []string `json:"fields,omitempty"`
}

// CR is what one pass over one custom resource would change.
type CR struct {
	// CRD is the CRD's name in the Katalog.
	CRD       string `json:"crd"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Trigger is why the pass ran (create for every custom resource at start).
	Trigger string `json:"trigger"`
	// Deleting is true for a custom resource being deleted.
	Deleting bool `json:"deleting,omitempty"`
	// Suspended is true for a custom resource annotated orkestra.orkspace.io/reconcile:
	// suspended: not called, nothing written.
	Suspended bool `json:"suspended,omitempty"`
	// Called is false when the reconciler was not asked: a custom resource being deleted,
	// unless --include-deletes.
	Called bool `json:"called"`
	// Result is the remote reconciler's answer: ok, requeue or error; empty without one.
	Result string `json:"result,omitempty"`
	// Success, Reason and Message are what the Ready condition would say.
	Success bool   `json:"success"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Changes are the writes ork would make, in the order it would make them; empty when
	// nothing would change.
	Changes []Change `json:"changes"`
}

// Sort orders plans by CRD, namespace and name, for output that does not depend on the
// order the workers finished in.
func Sort(crs []CR) {
	slices.SortFunc(crs, func(a, b CR) int {
		return cmp.Or(cmp.Compare(a.CRD, b.CRD), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
