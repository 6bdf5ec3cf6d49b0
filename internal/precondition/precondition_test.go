package precondition

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRefusals(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	uidCause := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "metadata.uid"}}},
	}}
	uidMessage := apierrors.NewConflict(gr, "web", errors.New("Precondition failed: UID in precondition: 1, UID in object meta: 2 (uid mismatch)"))
	for _, tc := range []struct {
		name     string
		err      error
		uid, any bool
	}{
		{"resourceVersion conflict", apierrors.NewConflict(gr, "web", errors.New("the object has been modified")), false, true},
		{"uid cause", uidCause, true, true},
		{"uid in the message only", uidMessage, true, true},
		{"uid mismatch, wrapped", fmt.Errorf("apply: %w", uidCause), true, true},
		{"not found", apierrors.NewNotFound(gr, "web"), false, false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "web", nil), false, false},
		{"not an API error", errors.New("connection refused"), false, false},
		{"nil", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UIDMismatch(tc.err); got != tc.uid {
				t.Errorf("UIDMismatch = %v, want %v", got, tc.uid)
			}
			if got := Failed(tc.err); got != tc.any {
				t.Errorf("Failed = %v, want %v", got, tc.any)
			}
		})
	}
}
