package validate

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/target"
)

// statusSchema warns when the crdFile's status schema would prune what ork run writes: the
// apiserver drops every status key a structural schema neither declares nor preserves, and
// ork run, told so by the apiserver's warning, then writes no conditions (no Ready) or no
// observedGeneration for the CRD's custom resources.
func (k *checker) statusSchema() {
	c := k.crd
	if c.Manifest == nil || c.APITypes == nil || k.schema == nil {
		return
	}
	if !k.hasStatusSubresource() {
		return // no status written at all: the status-subresource rule says it
	}
	root := k.schema
	if root.XPreserveUnknownFields != nil && *root.XPreserveUnknownFields {
		if _, declared := root.Properties["status"]; !declared {
			return
		}
	}
	status, declared := root.Properties["status"]
	var pruned []string
	switch {
	case !declared:
		pruned = []string{"conditions", "observedGeneration"}
	case status.XPreserveUnknownFields != nil && *status.XPreserveUnknownFields:
		return
	default:
		for _, key := range []string{"conditions", "observedGeneration"} {
			if _, ok := status.Properties[key]; !ok {
				pruned = append(pruned, key)
			}
		}
	}
	if len(pruned) == 0 {
		return
	}
	what := "status." + pruned[0]
	if len(pruned) == 2 {
		what = "status." + pruned[0] + " nor status." + pruned[1]
	}
	k.warnAt(katalog.RuleStatusSchema, "crdFile", fmt.Sprintf("the status schema of version %s of %s declares no %s and does not preserve unknown fields: the apiserver prunes what ork run writes there, so ork run stops writing it (no conditions: no Ready condition)",
		c.APITypes.Version, c.Manifest.Name, what),
		"declare conditions (a list of objects) and observedGeneration (an integer) under status.properties, or set x-kubernetes-preserve-unknown-fields: true on status")
}

// lastDecisionStatus warns when the status schema would prune status.lastDecision, ork
// run's record of the last pass that wrote something (docs/provenance.md): ork run then
// writes it in vain, and ork blame finds no decision on the custom resource.
func (k *checker) lastDecisionStatus() {
	c := k.crd
	if c.Manifest == nil || c.APITypes == nil || k.schema == nil || !k.hasStatusSubresource() {
		return
	}
	keeps, missing := decision.StatusKeeps(k.schema, decision.Writes{
		Target:        c.Target() != nil,
		SkipUnchanged: c.IsRemote() && c.OperatorBox.Reconcile.Remote.SkipUnchanged != nil,
	})
	if keeps {
		return
	}
	what := "declares no status.lastDecision and does not preserve unknown fields in status"
	if len(missing) > 0 {
		what = fmt.Sprintf("declares status.lastDecision without %s and does not preserve unknown fields in it", strings.Join(missing, ", "))
	}
	why := "the apiserver prunes the record of the last decision ork run writes there, so ork blame finds none on the custom resource"
	if slices.Equal(missing, []string{"target"}) {
		why = "the apiserver prunes the cluster the record of the last decision names"
	}
	k.warnAt(katalog.RuleStatusSchema, "crdFile", fmt.Sprintf("the status schema of version %s of %s %s: %s",
		c.APITypes.Version, c.Manifest.Name, what, why),
		"declare lastDecision (type: object, x-kubernetes-preserve-unknown-fields: true) under status.properties, or set x-kubernetes-preserve-unknown-fields: true on status")
}

// childTargetsStatus warns when a CRD with a target has a status schema that would prune
// status.childTargets, where ork run records the targets that may hold a custom resource's
// children (docs/multicluster.md): a custom resource whose target changes then leaves its
// children on the cluster it left.
func (k *checker) childTargetsStatus() {
	c := k.crd
	if c.Target() == nil || c.Manifest == nil || c.APITypes == nil || k.schema == nil || !k.hasStatusSubresource() {
		return
	}
	root := k.schema
	status, declared := root.Properties["status"]
	switch {
	case !declared && preserves(root), declared && preserves(&status):
		return
	case declared:
		if _, ok := status.Properties[target.StatusField]; ok {
			return
		}
	}
	k.warnAt(katalog.RuleStatusSchema, "crdFile", fmt.Sprintf("the status schema of version %s of %s declares no status.%s and does not preserve unknown fields in status: the apiserver prunes ork run's record of the targets that hold a custom resource's children, so a custom resource whose target changes leaves its children on the cluster it left",
		c.APITypes.Version, c.Manifest.Name, target.StatusField),
		"declare "+target.StatusField+" (type: array, items: {type: string}) under status.properties, or set x-kubernetes-preserve-unknown-fields: true on status")
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// hasStatusSubresource reports whether the crdFile's version of the CRD has the status
// subresource, through which ork run writes status.
func (k *checker) hasStatusSubresource() bool {
	c := k.crd
	for _, v := range c.Manifest.Spec.Versions {
		if v.Name == c.APITypes.Version && v.Subresources != nil && v.Subresources.Status != nil {
			return true
		}
	}
	return false
}

// operationStatus warns when a remote CRD's status schema would prune status.operation,
// where ork run holds a long-running operation the reconciler answered "pending" for: ork
// run then keeps it in an annotation of the custom resource, a write of the object itself
// rather than of its status.
func (k *checker) operationStatus() {
	c := k.crd
	if c.OperatorBox.Reconcile.Remote == nil || c.Manifest == nil || c.APITypes == nil || k.schema == nil || !k.hasStatusSubresource() {
		return
	}
	keeps, missing := operation.StatusKeeps(k.schema)
	if keeps {
		return
	}
	what := "declares no status.operation and does not preserve unknown fields in status"
	if len(missing) > 0 {
		what = fmt.Sprintf("declares status.operation without %s and does not preserve unknown fields in it", strings.Join(missing, ", "))
	}
	k.warnAt(katalog.RuleOperationStatus, "crdFile", fmt.Sprintf("the status schema of version %s of %s %s: when the reconciler answers \"pending\", ork run holds the operation in the annotation %s of the custom resource instead of status.operation",
		c.APITypes.Version, c.Manifest.Name, what, operation.Annotation),
		"declare operation (type: object, x-kubernetes-preserve-unknown-fields: true) under status.properties, or set x-kubernetes-preserve-unknown-fields: true on status; a reconciler that never answers pending needs neither")
}
