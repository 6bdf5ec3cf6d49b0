package childwrite

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/runplan"
)

// A prune is sent as the mode's writer says: a real one with no DryRun and noted in the
// write book while it runs, a dry run's with dryRun=All, noted for the plan and remembered
// nowhere (the child still exists: its next event is no echo of ork's).
func TestPruneEffectsFollowTheMode(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "App"}}
	cr.SetName("a")
	cr.SetNamespace("ns")
	cr.SetUID("cr-uid")
	for _, dry := range []bool{false, true} {
		child := &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", UID: "child-uid", ResourceVersion: "7",
				Labels:          map[string]string{naming.ManagedByLabel: naming.ManagedBy},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cr, cr.GroupVersionKind())}},
		}
		scheme := metadatafake.NewTestScheme()
		_ = metav1.AddMetaToScheme(scheme)
		meta := metadatafake.NewSimpleMetadataClient(scheme, child)
		var notes []runplan.Change
		var pruningSeen bool
		book := NewBook()
		meta.PrependReactor("delete", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
			_, pruningSeen = book.pruned[RefOf(gvr.GroupResource(), child)]
			return false, nil, nil
		})
		w := New(Deps{Meta: meta, Book: book, DryRun: dry, MayWrite: func(string, types.UID) error { return nil },
			Note: func(_ metav1.Object, ch runplan.Change) { notes = append(notes, ch) }})
		ok, err := w.pruneOne(context.Background(), cr, pruneCandidate{gvr: gvr, ref: RefOf(gvr.GroupResource(), child), obj: child})
		if err != nil || !ok {
			t.Fatalf("dry=%v: prune = %v, %v; want pruned", dry, ok, err)
		}
		var sent []string
		for _, a := range meta.Actions() {
			if d, isDelete := a.(clienttesting.DeleteAction); isDelete {
				sent = d.GetDeleteOptions().DryRun
			}
		}
		wantSent := []string(nil)
		wantNotes := 0
		if dry {
			wantSent, wantNotes = []string{metav1.DryRunAll}, 1
		}
		if !slices.Equal(sent, wantSent) || len(notes) != wantNotes || pruningSeen == dry {
			t.Errorf("dry=%v: sent DryRun %v, %d notes, book noted the prune: %v; want %v, %d, %v",
				dry, sent, len(notes), pruningSeen, wantSent, wantNotes, !dry)
		}
	}
}
