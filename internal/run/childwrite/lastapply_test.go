package childwrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/trace"
)

func TestConflictingManagersComeFromTheCauses(t *testing.T) {
	err := apierrors.NewApplyConflict([]metav1.StatusCause{
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-edit" using apps/v1`, Field: ".spec.replicas"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "hpa"`, Field: ".spec.replicas"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-edit" using apps/v1`, Field: ".spec.template"},
		{Type: metav1.CauseTypeFieldValueInvalid, Message: `conflict with "not-a-manager"`},
	}, "Apply failed with 3 conflicts")
	if got, want := conflictingManagers(err), []string{"hpa", "kubectl-edit"}; !cmp.Equal(got, want) {
		t.Errorf("conflictingManagers = %v, want %v", got, want)
	}
	if got := conflictingManagers(apierrors.NewConflict(schema.GroupResource{Resource: "x"}, "y", nil)); got != nil {
		t.Errorf("a precondition conflict names managers %v", got)
	}
}

func TestLastApplyOfMapsEachEntry(t *testing.T) {
	entries := []remote.AppliedResource{
		{Type: "configmap", Name: "a"}, {Type: "deployment", Name: "b"},
		{APIVersion: "v1", Kind: "Service", Name: "c"}, {Type: "secret", Name: "d"},
	}
	rep := Report{
		Objects: []trace.Apply{
			{Ref: "configmaps/a", Namespace: "ns", Outcome: trace.Unchanged},
			{Ref: "deployments/b", Namespace: "ns", Outcome: trace.Created},
			{Ref: "services/c", Namespace: "ns", Outcome: trace.Failed, Error: "apply services/c: conflict"},
			{Ref: "secrets/d", Namespace: "ns", Outcome: trace.Skipped},
			{Ref: "configmaps/old", Namespace: "ns", Outcome: trace.Pruned},
		},
		conflicts: map[int][]string{2: {"kubectl-edit"}},
	}
	want := []remote.AppliedResource{
		{Type: "configmap", Name: "a", Namespace: "ns", Outcome: remote.OutcomeUnchanged},
		{Type: "deployment", Name: "b", Namespace: "ns", Outcome: remote.OutcomeApplied},
		{APIVersion: "v1", Kind: "Service", Name: "c", Namespace: "ns", Outcome: remote.OutcomeConflict,
			Message: "apply services/c: conflict", ConflictingManagers: []string{"kubectl-edit"}},
		{Type: "secret", Name: "d", Namespace: "ns", Outcome: remote.OutcomeError, Message: "not applied: resources[2] failed first"},
	}
	if d := cmp.Diff(want, LastApplyOf(entries, rep, "apply services/c: conflict", "ns")); d != "" {
		t.Errorf("LastApplyOf (-want +got):\n%s", d)
	}
	refused := LastApplyOf(entries[:1], Report{}, "nothing applied: resources[0]: bad", "ns")
	if d := cmp.Diff([]remote.AppliedResource{{Type: "configmap", Name: "a", Namespace: "ns", Outcome: remote.OutcomeError,
		Message: "nothing applied: resources[0]: bad"}}, refused); d != "" {
		t.Errorf("a refused result (-want +got):\n%s", d)
	}
}
