package reconciler

import (
	"encoding/json"
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
