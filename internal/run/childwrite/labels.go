package childwrite

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
)

// OperatorLabelPatch is the merge patch that gives a child the operator label, with its uid
// (and resourceVersion, unless empty) as preconditions.
func OperatorLabelPatch(uid types.UID, resourceVersion, name string) ([]byte, error) {
	return LabelPatch(uid, resourceVersion, map[string]string{naming.OperatorLabel: name})
}

// LabelPatch is the merge patch that sets labels on a child, with its uid (and
// resourceVersion, unless empty) as preconditions.
func LabelPatch(uid types.UID, resourceVersion string, labels map[string]string) ([]byte, error) {
	md := map[string]any{"uid": string(uid), "labels": labels}
	if resourceVersion != "" {
		md["resourceVersion"] = resourceVersion
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return nil, fmt.Errorf("encode label patch: %w", err)
	}
	return patch, nil
}
