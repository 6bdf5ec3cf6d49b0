package childwrite

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/kobj"
)

// OperatorLabelPatch is the merge patch that gives a child the operator label, with its uid
// (and resourceVersion, unless empty) as preconditions.
func OperatorLabelPatch(uid types.UID, resourceVersion, name string) ([]byte, error) {
	return kobj.LabelPatch(uid, resourceVersion, map[string]string{naming.OperatorLabel: name})
}
