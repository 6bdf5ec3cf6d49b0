package shardring

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
)

// The slot label of an older child is written with its resourceVersion as precondition;
// a child whose resourceVersion moved meanwhile is read again and written again (up to
// LabelTries), unless it was labelled meanwhile.
func TestPatchSlotLabelRetriesAChildThatMoved(t *testing.T) {
	// The engine's tests of a re-read child: no slot label yet (the take-time labelling),
	// or still under the old default operator name (the relabel).
	unslotted := func(cur metav1.Object) bool { return cur.GetLabels()[naming.SlotLabel] == "" }
	underDefaultName := func(cur metav1.Object) bool { return cur.GetLabels()[naming.OperatorLabel] == naming.DefaultOperator }
	const owner = types.UID("owner")
	child := func(rv string, labels map[string]string) *metav1.PartialObjectMetadata {
		o := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
		o.Namespace, o.Name, o.UID, o.ResourceVersion, o.Labels = "ns", "c", "child", rv, labels
		o.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: owner, Controller: ptr.To(true)}}
		return o
	}
	tests := []struct {
		name      string
		conflicts int               // patches answered with a conflict before one lands
		reread    map[string]string // the labels a re-read finds
		wantRV    string
		wantSent  int
		wantErr   bool
		still     func(metav1.Object) bool // childlabel's unslotted test, or the relabel's
	}{
		{"lands at once", 0, nil, "9", 1, false, unslotted},
		{"moved once, then lands", 1, nil, "9", 2, false, unslotted},
		{"labelled meanwhile", 1, map[string]string{naming.SlotLabel: "ab"}, "", 1, false, unslotted},
		{"keeps moving", LabelTries, nil, "", LabelTries, true, unslotted},
		// A child a sharded ork wrote under the old default name has its slot label: the
		// relabel retries it while it still carries that name.
		{"relabel: slotted, moved once, then lands", 1, map[string]string{naming.SlotLabel: "ab", naming.OperatorLabel: naming.DefaultOperator}, "9", 2, false, underDefaultName},
		{"relabel: relabelled meanwhile", 1, map[string]string{naming.SlotLabel: "ab", naming.OperatorLabel: "other"}, "", 1, false, underDefaultName},
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := metadatafake.NewSimpleMetadataClient(runtime.NewScheme())
			var sent []string
			client.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
				sent = append(sent, string(a.(k8stesting.PatchAction).GetPatch()))
				if len(sent) <= tt.conflicts {
					return true, nil, apierrors.NewConflict(gvr.GroupResource(), "c", nil)
				}
				return true, child("9", nil), nil
			})
			client.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, child("2", tt.reread), nil
			})
			rv, err := patchSlotLabel(context.Background(), client.Resource(gvr).Namespace("ns"), child("1", nil), owner,
				map[string]string{naming.SlotLabel: "ab"}, tt.still)
			if rv != tt.wantRV || len(sent) != tt.wantSent || (err != nil) != tt.wantErr || (err != nil && !precondition.Failed(err)) {
				t.Fatalf("rv %q after %d writes, err %v: want rv %q after %d, error %v", rv, len(sent), err, tt.wantRV, tt.wantSent, tt.wantErr)
			}
			if len(sent) > 1 && !strings.Contains(sent[1], `"resourceVersion":"2"`) {
				t.Errorf("the second write %s: want the re-read's resourceVersion as precondition", sent[1])
			}
		})
	}
}
