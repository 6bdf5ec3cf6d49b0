// Package crschema judges a custom resource against its CRD's openAPIV3Schema with the
// apiserver's own code (k8s.io/apiextensions-apiserver), in the apiserver's order for a
// create with fieldValidation=Strict: unknown fields, defaults, then the schema's
// validation, the object's name and the schema's x-kubernetes-validations (CEL) rules.
package crschema

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Problem is one way a custom resource breaks its CRD's schema.
type Problem struct {
	// Field is the offending field's path: "spec.replicas", "spec.ports[0].port".
	Field string
	// Message says what is wrong, in the apiserver's words; for a CEL rule, the rule's
	// message.
	Message string
	// Rule is true when an x-kubernetes-validations rule found the problem.
	Rule bool
}

// Validator checks custom resources of one version of a CRD.
type Validator struct {
	structural *structuralschema.Structural
	schema     validation.SchemaCreateValidator
	// rules evaluates the schema's x-kubernetes-validations; nil when it has none.
	rules *cel.Validator
}

// New builds the validator of a version's schema, as the apiserver does for its CRD.
func New(s *apiextensionsv1.JSONSchemaProps) (*Validator, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, internal, nil); err != nil {
		return nil, fmt.Errorf("convert the schema: %w", err)
	}
	st, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	v, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema: %w", err)
	}
	// The apiserver's limit per rule; a rule that does not compile is reported by
	// RuleProblems on the CRD (the apiserver refuses such a CRD), not here.
	rules := cel.NewValidator(st, true, celconfig.PerCallLimit)
	return &Validator{structural: st, schema: v, rules: rules}, nil
}

// WithoutRules returns a copy of v that does not evaluate x-kubernetes-validations: for a
// CRD whose rules RuleProblems refuses, so that each custom resource does not repeat it.
func (v *Validator) WithoutRules() *Validator {
	c := *v
	c.rules = nil
	return &c
}

// Validate returns every problem of obj (a custom resource as decoded from JSON); obj is not
// changed.
func (v *Validator) Validate(obj map[string]any) []Problem {
	u := runtime.DeepCopyJSON(obj)
	var out []Problem
	// Strict field validation rejects what the apiserver would otherwise prune.
	pruned := pruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range pruned {
		out = append(out, Problem{Field: p, Message: fmt.Sprintf("unknown field %q", p)}) // the apiserver's words
	}
	defaulting.Default(u, v.structural)
	errs := validation.ValidateCustomResource(nil, u, v.schema)
	for _, e := range errs {
		out = append(out, Problem{Field: e.Field, Message: e.ErrorBody()})
	}
	md, _ := u["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if name == "" {
		out = append(out, Problem{Field: "metadata.name", Message: "Required value: name is required"})
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
		if name != "" {
			out = append(out, Problem{Field: "metadata.name", Message: fmt.Sprintf("Invalid value: %q: %s", name, msg)})
		}
	}
	return append(out, v.validateRules(u, errs)...)
}

// validateRules evaluates the x-kubernetes-validations rules of the pruned and defaulted
// object as the apiserver does on create: not at all after a blocking schema error (a rule
// would read a value of the wrong type), and without oldSelf, so that transition rules are
// skipped. CEL evaluation is bounded by the apiserver's cost budget, not by time, so it needs
// no caller's context.
func (v *Validator) validateRules(obj map[string]any, schemaErrs field.ErrorList) []Problem {
	if v.rules == nil || blocking(schemaErrs) {
		return nil
	}
	errs, _ := v.rules.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	out := make([]Problem, 0, len(errs))
	for _, e := range errs {
		f := e.Field
		if f == "<nil>" {
			f = "" // a rule of the resource's root: field.Path's nil path
		}
		out = append(out, Problem{Field: f, Message: e.Detail, Rule: true})
	}
	return out
}

// blocking is the apiserver's hasBlockingErr (registry/customresource): after these, it
// evaluates no CEL rule.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
