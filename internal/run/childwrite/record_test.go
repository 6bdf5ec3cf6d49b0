package childwrite

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/decision"
)

// Each child's account in the decision log: what the write did, its resourceVersions and
// the paths it changed, from the whole objects the write saw.
func TestRecordedChildren(t *testing.T) {
	obj := func(replicas int64) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "ns"}, "spec": map[string]any{"replicas": replicas}}
	}
	live := &metav1.ObjectMeta{Name: "web", ResourceVersion: "7"}
	p := func(s *seen) planned {
		return planned{obj: &unstructured.Unstructured{Object: obj(3)}, seen: s}
	}
	tests := []struct {
		name            string
		p               planned
		created, change bool
		live            metav1.Object
		err             error
		want            decision.Child
		fields          []string
	}{
		{"applied", p(&seen{before: obj(2), after: obj(3), rvBefore: "7", rvAfter: "8"}), false, true, live, nil,
			decision.Child{Outcome: decision.ChildApplied, ResourceVersionBefore: "7", ResourceVersionAfter: "8"}, []string{"spec.replicas"}},
		{"created", p(&seen{after: obj(3), rvAfter: "8"}), true, false, nil, nil,
			decision.Child{Outcome: decision.ChildCreated, ResourceVersionAfter: "8"}, []string{"apiVersion", "kind", "metadata.name", "metadata.namespace", "spec.replicas"}},
		{"unchanged", p(&seen{}), false, false, live, nil,
			decision.Child{Outcome: decision.ChildUnchanged, ResourceVersionBefore: "7", ResourceVersionAfter: "7"}, nil},
		{"failed, with its reason", p(&seen{}), false, false, live, failed("AlreadyOwned", "owned by another"),
			decision.Child{Outcome: decision.ChildFailed, Reason: "AlreadyOwned", ResourceVersionBefore: "7"}, nil},
		{"failed, a plain error", p(nil), false, false, nil, errors.New("boom"),
			decision.Child{Outcome: decision.ChildFailed, Reason: reasonApplyFailed}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.recorded(tt.created, tt.change, tt.live, tt.err)
			fields := got.Fields.Paths()
			same := got.Outcome == tt.want.Outcome && got.Reason == tt.want.Reason &&
				got.ResourceVersionBefore == tt.want.ResourceVersionBefore && got.ResourceVersionAfter == tt.want.ResourceVersionAfter
			if !same || !slices.Equal(fields, tt.fields) || got.Ref.Kind != "Deployment" || got.Ref.Name != "web" {
				t.Errorf("recorded = %+v %v, want %+v %v", got, fields, tt.want, tt.fields)
			}
		})
	}
}
