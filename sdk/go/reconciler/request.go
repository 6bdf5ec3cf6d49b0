package reconciler

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Name is metadata.name of the custom resource.
func (o Object) Name() string { s, _ := o.Metadata["name"].(string); return s }

// Namespace is metadata.namespace of the custom resource ("" when cluster-scoped).
func (o Object) Namespace() string { s, _ := o.Metadata["namespace"].(string); return s }

// DecodeSpec decodes the custom resource's spec into v (a struct of the CRD's spec, such as
// one `ork gen types` writes); an absent spec leaves v as it is.
func (o Object) DecodeSpec(v any) error { return decodeRaw(o.Spec, v) }

// DecodeStatus decodes the custom resource's status into v; an absent one leaves v as is.
func (o Object) DecodeStatus(v any) error { return decodeRaw(o.Status, v) }

func decodeRaw(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// Major is the major part of a contract version: "1" of "1.2".
func Major(version string) string {
	major, _, _ := strings.Cut(strings.TrimSpace(version), ".")
	return major
}

// UID is metadata.uid of the custom resource ("" when payload.object.exclude removes it).
func (o Object) UID() string { s, _ := o.Metadata["uid"].(string); return s }

// OperationKey is the stable key of the work this request asks for: prepared.operation.key
// while ork holds an operation for the request's generation, else
// "<metadata.uid>/<prepared.generation>" (no operation, or a superseded one). Key the
// external work you start on it (answering Pending): when ork asks again for the same
// generation without prepared.operation (it crashed before persisting your answer), look
// the key up and answer Pending with the operation you already started, not a second one.
func (r PreparedRequest) OperationKey() string {
	if op := r.Prepared.Operation; op != nil && !op.Superseded {
		return op.Key
	}
	return r.Object.UID() + "/" + strconv.FormatInt(r.Prepared.Generation, 10)
}
