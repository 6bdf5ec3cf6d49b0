package childlabel

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/shard"
)

// The operator's name (--name) used to default to naming.DefaultOperator whatever the
// Katalog; it now defaults to the Katalog's metadata.name. An operator that ran under the
// old default and starts under its Katalog's name would find its own children labelled for
// "another operator": outside its child caches (the first calls would miss them) and, at
// the apply, an OperatorConflict on every CR. So it relabels them once, as it labels the
// children of an ork from before the label (Older): only a child whose controller is a
// custom resource of one of the Katalog's CRDs. Another ork legitimately named orkestra
// reconciles CRDs of its own, whose children this one never touches.

// defaultNamedChildren selects the children ork wrote under the old default name.
const defaultNamedChildren = naming.ManagedByLabel + "=" + naming.ManagedBy + "," + naming.OperatorLabel + "=" + naming.DefaultOperator

// DefaultNamed relabels the default-named children of the Katalog's CRs (when sharded, of
// the CRs of buckets) and returns the highest resourceVersion it wrote per collection. A
// failure is logged, not fatal.
func (l *Labeller) DefaultNamed(ctx context.Context, buckets []int) map[string]string {
	if l.d.Operator == naming.DefaultOperator {
		return nil
	}
	var want map[int]bool
	if l.d.Ring != nil {
		want = map[int]bool{}
		for _, b := range buckets {
			want[b] = true
		}
	}
	relabelled := 0
	written := map[string]string{}
	for _, col := range l.d.Collections {
		n, rv, err := l.defaultNamedOf(ctx, col, want)
		relabelled += n
		if rv != "" {
			written[shardring.CollectionKey(col.GVR, col.Namespace)] = rv
		}
		if err != nil && ctx.Err() == nil {
			l.d.Log.Warn("relabelling the children written under the old default name: relabel the rest with kubectl label --overwrite",
				"resource", col.GVR.GroupResource().String(), "from", naming.DefaultOperator, "error", err.Error())
		}
	}
	if relabelled > 0 {
		l.d.Log.Info("relabelled the children written under the old default name",
			"label", naming.OperatorLabel, "from", naming.DefaultOperator, "to", l.d.Operator, "children", relabelled)
	}
	return written
}

// defaultNamedOf relabels one collection's default-named children whose controller is a
// CR of the Katalog (when sharded, of a bucket in want), and returns how many and the
// highest resourceVersion written.
func (l *Labeller) defaultNamedOf(ctx context.Context, col Collection, want map[int]bool) (int, string, error) {
	res := l.d.Meta.Resource(col.GVR)
	list, err := res.Namespace(col.Namespace).List(ctx, metav1.ListOptions{LabelSelector: defaultNamedChildren})
	if err != nil {
		return 0, "", fmt.Errorf("list: %w", err)
	}
	n, highest := 0, ""
	for i := range list.Items {
		obj := &list.Items[i]
		ref := metav1.GetControllerOf(obj)
		if ref == nil {
			continue
		}
		namespaced, ours := l.owner(ref)
		if !ours {
			continue // another operator's: another ork named orkestra, for CRDs of its own
		}
		var rv string
		if l.d.Ring != nil {
			if !want[shard.BucketOf(ref.UID, l.d.Ring.Buckets())] {
				continue
			}
			// As a pass of the owner's bucket, with the slot label (shardring.Ring.LabelSlot).
			rv, err = l.d.Ring.LabelSlot(ctx, res.Namespace(obj.GetNamespace()), obj, ref.UID, l.d.Operator, underDefaultName)
		} else {
			key := ref.Name // the owner's key: a namespaced owner is in its child's namespace
			if namespaced {
				key = obj.GetNamespace() + "/" + ref.Name
			}
			if err := l.d.MayWrite(key, ref.UID); err != nil {
				return n, highest, err
			}
			rv, err = relabelChild(ctx, res.Namespace(obj.GetNamespace()), obj, ref.UID, l.d.Operator)
		}
		if err != nil {
			return n, highest, err
		}
		if rv != "" {
			n++
			if shardring.RVAfter(rv, highest) {
				highest = rv
			}
		}
	}
	return n, highest, nil
}

// relabelChild writes the operator label name on the default-named child obj of owner,
// with its uid and resourceVersion as preconditions, and returns the write's
// resourceVersion. A child whose resourceVersion moved meanwhile is read again and tried
// again, up to shardring.LabelTries writes, while it is still default-named and owner's; ""
// and no error when it went or is no longer either.
func relabelChild(ctx context.Context, res metadata.ResourceInterface, obj *metav1.PartialObjectMetadata, owner types.UID,
	name string) (string, error) {
	for try := 1; ; try++ {
		patch, err := childwrite.OperatorLabelPatch(obj.GetUID(), obj.GetResourceVersion(), name)
		if err != nil {
			return "", err
		}
		got, err := res.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: naming.FieldManager})
		switch {
		case err == nil:
			return got.GetResourceVersion(), nil
		case apierrors.IsNotFound(err):
			return "", nil
		case !precondition.Failed(err) || try == shardring.LabelTries:
			return "", fmt.Errorf("label %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		cur, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("read %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		if cur.GetUID() != obj.GetUID() || cur.GetLabels()[naming.OperatorLabel] != naming.DefaultOperator {
			return "", nil
		}
		if ref := metav1.GetControllerOf(cur); ref == nil || ref.UID != owner {
			return "", nil
		}
		obj = cur
	}
}

// underDefaultName is the relabel's test of a re-read child: still labelled with the old
// default operator name (a child written by a sharded ork carries its slot label already).
func underDefaultName(cur metav1.Object) bool {
	return cur.GetLabels()[naming.OperatorLabel] == naming.DefaultOperator
}
