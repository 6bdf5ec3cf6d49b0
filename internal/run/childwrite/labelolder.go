package childwrite

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
)

// unlabelledChildren selects children an ork from before the operator label wrote.
const unlabelledChildren = naming.ManagedByLabel + "=" + naming.ManagedBy + ",!" + naming.OperatorLabel

// LabelOlder gives the operator label to the children of one collection (a child type in one
// namespace, all: NamespaceAll) that an older ork wrote for one of owners' kinds (namespaced
// or not), each write asked of mayWrite for its owner and conditional on the child's uid and
// resourceVersion: a child changed or gone meanwhile is left to the apply. It returns how
// many it labelled.
func LabelOlder(ctx context.Context, children metadata.Getter, ns string,
	mayWrite func(key string, uid types.UID) error, operator string, owners map[schema.GroupKind]bool) (int, error) {
	list, err := children.Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: unlabelledChildren})
	if err != nil {
		return 0, fmt.Errorf("list: %w", err)
	}
	n := 0
	for _, obj := range list.Items {
		ref := metav1.GetControllerOf(&obj)
		if ref == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		namespaced, ours := owners[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
		if !ours {
			continue // another controller's object that carries ork's managed-by label
		}
		key := ref.Name // the owner's key: a namespaced owner is in its child's namespace
		if namespaced {
			key = obj.GetNamespace() + "/" + ref.Name
		}
		if err := mayWrite(key, ref.UID); err != nil {
			return n, err
		}
		patch, err := OperatorLabelPatch(obj.GetUID(), obj.GetResourceVersion(), operator)
		if err != nil {
			return n, err
		}
		_, err = children.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: naming.FieldManager})
		switch {
		case err == nil:
			n++
		case precondition.Failed(err), apierrors.IsNotFound(err):
			// Changed or gone meanwhile: the apply decides.
		default:
			return n, fmt.Errorf("label %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return n, nil
}
