// Package childlabel labels, outside any pass, the children ork wrote under labels it no
// longer selects: an older ork's without the operator label, those written under the old
// default operator name, and, at a shard take, those written before sharding without the
// slot label. The child caches select on these labels and would miss them otherwise.
package childlabel

import (
	"context"
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/shardring"
	"github.com/orkspace/ork/internal/shard"
)

// Collection is one child type in one watched namespace (all: NamespaceAll).
type Collection struct {
	GVR       schema.GroupVersionResource
	Namespace string
}

// Ring is the sharded ring's side of a label (shardring.Ring): its bucket count, and each
// write as a pass of the owner's bucket.
type Ring interface {
	Buckets() int
	LabelSlot(ctx context.Context, res metadata.ResourceInterface, obj *metav1.PartialObjectMetadata, owner types.UID,
		operator string, still func(metav1.Object) bool) (string, error)
}

// Deps are what the labelling writes with and for whom.
type Deps struct {
	Meta metadata.Interface
	// Operator is the operator's name (--name), the value of the operator label.
	Operator string
	// MayWrite guards a single-leader write for the custom resource of key and uid.
	MayWrite func(key string, uid types.UID) error
	// Ring writes the labels when sharded; nil for a single leader.
	Ring Ring
	// Owners are the Katalog's kinds, and whether each is namespaced (its key's form): a
	// child is this operator's when its controller is one of them.
	Owners map[schema.GroupKind]bool
	// Collections are the child types of every CRD in each namespace their informers
	// watch, each once.
	Collections []Collection
	Log         *slog.Logger
}

// Labeller labels the children of one set of controllers.
type Labeller struct{ d Deps }

// New is the labeller of d.
func New(d Deps) *Labeller { return &Labeller{d: d} }

// Older gives the operator label to the children an older ork wrote for the Katalog's
// custom resources, before the child caches start. Without it the caches, which select on
// the label, would miss them: the first passes would send an incomplete prepared.children
// (a reconciler that re-creates what it does not see could overwrite a Secret's data), and a
// change to them would go unheard until an apply labelled them. A child without a
// controller (outside its owner's namespace) is left to the apply, which reads it live.
// Each write carries the child's uid and resourceVersion: a child changed meanwhile is left
// to the apply too. A failure is logged, not fatal: the apply path labels the rest.
func (l *Labeller) Older(ctx context.Context) {
	labelled := 0
	for _, col := range l.d.Collections {
		n, err := childwrite.LabelOlder(ctx, l.d.Meta.Resource(col.GVR), col.Namespace, l.d.MayWrite, l.d.Operator, l.d.Owners)
		labelled += n
		if err != nil {
			l.d.Log.Warn("labelling children of an older ork: the applies will label the rest",
				"resource", col.GVR.GroupResource().String(), "error", err.Error())
		}
	}
	if labelled > 0 {
		l.d.Log.Info("labelled the children an older ork wrote", "label", naming.OperatorLabel+"="+l.d.Operator, "children", labelled)
	}
}

// Taken labels the children of the CRs of the buckets a sharded replica took: those
// written before sharding (unslotted) and those written under the old default name. It
// returns the highest resourceVersion written per collection (shardring.CollectionKey).
func (l *Labeller) Taken(ctx context.Context, buckets []int) map[string]string {
	written := l.unslotted(ctx, buckets)
	for col, rv := range l.DefaultNamed(ctx, buckets) {
		if shardring.RVAfter(rv, written[col]) {
			written[col] = rv
		}
	}
	return written
}

// unslottedChildren selects the children ork wrote without the slot label.
const unslottedChildren = naming.ManagedByLabel + "=" + naming.ManagedBy + ",!" + naming.SlotLabel

// unslotted gives naming.SlotLabel (and the operator label, which an older ork did not
// write) to the children without it whose controller is a CR of the Katalog in one of
// buckets. Each write carries the child's uid and resourceVersion as preconditions (a
// child changed meanwhile is left to its owner's apply) and goes as a pass of its owner's
// bucket: a hand-back waits for it, a loss cancels it, and the transport checks the bucket
// at the send. A failure is logged, not fatal: the owners' applies label the rest.
func (l *Labeller) unslotted(ctx context.Context, buckets []int) map[string]string {
	want := map[int]bool{}
	for _, b := range buckets {
		want[b] = true
	}
	labelled := 0
	written := map[string]string{}
	for _, col := range l.d.Collections {
		n, rv, err := l.unslottedOf(ctx, col, want)
		labelled += n
		if rv != "" {
			written[shardring.CollectionKey(col.GVR, col.Namespace)] = rv
		}
		if err != nil && ctx.Err() == nil {
			l.d.Log.Warn("labelling children written before sharding: their owners' applies will label the rest",
				"resource", col.GVR.GroupResource().String(), "buckets", buckets, "error", err.Error())
		}
	}
	if labelled > 0 {
		l.d.Log.Info("gave the slot label to the children written before sharding", "label", naming.SlotLabel,
			"buckets", buckets, "children", labelled)
	}
	return written
}

// unslottedOf labels the collection's unslotted children of the buckets want, and returns
// how many, and the highest resourceVersion its writes answered ("" for none).
func (l *Labeller) unslottedOf(ctx context.Context, col Collection, want map[int]bool) (int, string, error) {
	res := l.d.Meta.Resource(col.GVR)
	list, err := res.Namespace(col.Namespace).List(ctx, metav1.ListOptions{LabelSelector: unslottedChildren})
	if err != nil {
		return 0, "", fmt.Errorf("list: %w", err)
	}
	n, highest := 0, ""
	for i := range list.Items {
		obj := &list.Items[i]
		ref := metav1.GetControllerOf(obj)
		if ref == nil || !want[shard.BucketOf(ref.UID, l.d.Ring.Buckets())] {
			continue
		}
		if _, ours := l.owner(ref); !ours {
			continue // another controller's object that carries ork's managed-by label
		}
		if op, ok := obj.GetLabels()[naming.OperatorLabel]; ok && op != l.d.Operator {
			continue // another operator's
		}
		rv, err := l.d.Ring.LabelSlot(ctx, res.Namespace(obj.GetNamespace()), obj, ref.UID, l.d.Operator, stillUnslotted)
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

// owner reports whether ref names a kind of the Katalog, and whether it is namespaced.
func (l *Labeller) owner(ref *metav1.OwnerReference) (namespaced, ours bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, false
	}
	namespaced, ours = l.d.Owners[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	return namespaced, ours
}

// stillUnslotted is unslotted's test of a re-read child: no slot label yet.
func stillUnslotted(cur metav1.Object) bool { return cur.GetLabels()[naming.SlotLabel] == "" }
