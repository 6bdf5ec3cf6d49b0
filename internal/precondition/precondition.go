// Package precondition recognises the apiserver's refusals of the preconditions ork puts on
// its writes (a uid and a resourceVersion), which every writer of ork answers the same way:
// read the object again and decide afresh.
package precondition

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Failed reports a refused precondition: the object changed (409 Conflict on the
// resourceVersion) or was replaced by another incarnation (uid mismatch).
func Failed(err error) bool { return apierrors.IsConflict(err) || UIDMismatch(err) }

// UIDMismatch reports a refused uid precondition: the object was deleted and created again
// under the same name. The apiserver says so in a cause on metadata.uid or, for some
// writes, only in the message.
func UIDMismatch(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	if det := status.Status().Details; det != nil {
		for _, cause := range det.Causes {
			if cause.Field == "metadata.uid" {
				return true
			}
		}
	}
	msg := status.Status().Message
	return strings.Contains(msg, "uid mismatch") || strings.Contains(msg, "metadata.uid")
}
