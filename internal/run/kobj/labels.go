package kobj

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// LabelPatch is the merge patch that sets labels on the object of uid, at resourceVersion
// unless empty. Both preconditions ride in the patch, so a label never lands on a
// replacement, nor on a newer version than the one judged. One patch for every labelling
// ork does (the operator label, the shard slot), so that they cannot drift apart.
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
