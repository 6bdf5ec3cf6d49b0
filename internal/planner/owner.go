package planner

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/naming"
)

// ControlledBy reports whether cr is child's controller.
func ControlledBy(cr, child metav1.Object) bool {
	ref := metav1.GetControllerOf(child)
	return ref != nil && ref.UID == cr.GetUID()
}

// OwnedOrAdoptable reports whether ork may write child for cr: controlled by cr, by
// nothing, or by an earlier incarnation of cr (same kind and name, another uid: names are
// unique, so that uid no longer exists).
func OwnedOrAdoptable(cr Owner, child metav1.Object) bool {
	ref := metav1.GetControllerOf(child)
	if ref == nil || ref.UID == cr.GetUID() {
		return true
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	gvk := cr.GroupVersionKind()
	return err == nil && gv.Group == gvk.Group && ref.Kind == gvk.Kind && ref.Name == cr.GetName()
}

// Judge is the ownership decision on live, the existing object of a child ork would write
// for cr as the given operator (ork run --name): nil when ork may write it, else the
// Failure ork reports (AlreadyOwned, OperatorConflict). resource names the child's type in
// the message ("configmaps").
func Judge(cr Owner, live metav1.Object, resource, operator string) *Failure {
	if live == nil {
		return nil
	}
	if !OwnedOrAdoptable(cr, live) {
		ref := metav1.GetControllerOf(live)
		return fail(ReasonAlreadyOwned, "nothing applied: %s %s is controlled by %s %s (uid %s); ork never takes over another owner's object: rename the child or remove the other owner",
			resource, live.GetName(), ref.Kind, ref.Name, ref.UID)
	}
	// Writing ork's own name over another operator's label would take the child out of that
	// operator's cache, which would re-apply its own name on the delete it hears, and so on,
	// once a second for as long as both run. A child without the label (written by an ork
	// before the label existed) is taken.
	if v, ok := live.GetLabels()[naming.OperatorLabel]; ok && v != "" && v != operator {
		return fail(ReasonOperatorConflict, "nothing applied: %s %s is labelled %s=%s, another operator's (this ork runs as --name %s); two operators never write one child: give it one operator, or relabel it with kubectl label --overwrite",
			resource, live.GetName(), naming.OperatorLabel, v, operator)
	}
	return nil
}

// Owner is a custom resource as the ownership rules read it: its kind and its metadata.
type Owner interface {
	schema.ObjectKind
	metav1.Object
}

// MarkedBy reports whether child carries naming.OwnerAnnotation with cr's uid: how a child in
// another cluster (a target), which no ownerReference can reach, says whose it is.
func MarkedBy(cr, child metav1.Object) bool {
	return metav1.GetControllerOf(child) == nil && child.GetAnnotations()[naming.OwnerAnnotation] == string(cr.GetUID())
}

// JudgeMarked is Judge for a child in a target cluster: it also refuses a child marked as
// another custom resource's (naming.OwnerAnnotation), which there takes the place of the
// controller reference.
func JudgeMarked(cr Owner, live metav1.Object, resource, operator string) *Failure {
	if f := Judge(cr, live, resource, operator); f != nil || live == nil {
		return f
	}
	if owner, ok := live.GetAnnotations()[naming.OwnerAnnotation]; ok && owner != string(cr.GetUID()) {
		return fail(ReasonAlreadyOwned, "nothing applied: %s %s is marked %s=%s, another custom resource's; ork never takes over another owner's object: rename the child or remove the other owner",
			resource, live.GetName(), naming.OwnerAnnotation, owner)
	}
	return nil
}
