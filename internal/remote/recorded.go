package remote

import (
	"encoding/json"
	"fmt"
)

// DecodeResult decodes a RemoteReconcileResult as ork run does, strictly; an "error"
// result decodes as such (its Status must not be written).
func DecodeResult(data []byte) (*Result, error) { return decodeResult(data) }

// RequestOf is the Request whose PreparedRequest body is body (a recorded request), so that
// it can be sent again, to another endpoint: the object, trigger, attempt, children,
// related objects and last apply as they were sent. Args are rendered again from the object.
func RequestOf(body []byte) (Request, error) {
	var p preparedRequest
	if err := json.Unmarshal(body, &p); err != nil {
		return Request{}, fmt.Errorf("decode recorded request: %w", err)
	}
	return Request{Key: p.Key, Object: p.Object, Trigger: p.Prepared.Trigger, Attempt: p.Prepared.Attempt,
		Children: p.Prepared.Children, Related: p.Prepared.Related, LastApply: p.Prepared.LastApply}, nil
}

// GroupKindOf is the group and kind a recorded request's gvk names.
func GroupKindOf(body []byte) (group, kind string, err error) {
	var p struct {
		GVK gvk `json:"gvk"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return "", "", fmt.Errorf("decode recorded request: %w", err)
	}
	return p.GVK.Group, p.GVK.Kind, nil
}
