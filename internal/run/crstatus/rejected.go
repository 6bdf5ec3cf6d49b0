package crstatus

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orkspace/ork/internal/precondition"
)

// RejectedFields names the status fields of a 422 from the CRD's schema, or "" when err is
// not one.
func RejectedFields(err error) string {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return ""
	}
	var out []string
	if det := status.Status().Details; det != nil {
		for _, cause := range det.Causes {
			if strings.HasPrefix(cause.Field, "status") {
				out = append(out, cause.Field+": "+cause.Message)
			}
		}
	}
	if len(out) == 0 && !precondition.UIDMismatch(err) {
		return status.Status().Message
	}
	return strings.Join(out, "; ")
}
