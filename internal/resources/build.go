package resources

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/suggest"
)

// Names of the naming table that the engine (internal/run) still reads from here; new code
// uses internal/naming.
const (
	// ManagedByLabel is naming.ManagedByLabel, ManagedBy naming.ManagedBy.
	ManagedByLabel = naming.ManagedByLabel
	ManagedBy      = naming.ManagedBy
	// OperatorLabel is naming.OperatorLabel.
	OperatorLabel = naming.OperatorLabel
	// DefaultOperator is naming.DefaultOperator.
	DefaultOperator = naming.DefaultOperator
)

// Options are what Build needs to know about the custom resource the entry belongs to.
type Options struct {
	// Namespace is given to built-in (namespaced) objects that name none; default: none.
	// Objects of other kinds keep what they declare: their scope is only known to a
	// RESTMapper, so the caller defaults them.
	Namespace string
	// SelectorLabels are put on every workload's pods and selector, and are a service's
	// selector when it declares none; default: none (a service then selects naming.NameLabel=<its name>).
	SelectorLabels map[string]string
}

// OptionsFor are the Options for children of the custom resource namespace/name: its
// namespace, and naming.InstanceLabel=name as selector labels.
func OptionsFor(namespace, name string) Options {
	return Options{Namespace: namespace, SelectorLabels: map[string]string{naming.InstanceLabel: name}}
}

// Object is one built object, ready for server-side apply.
type Object struct {
	Obj *unstructured.Unstructured
	// Type is the object's intent type. For a kind outside the type table (custom, or the
	// full form of any other kind) it carries the object's GVK, Type "custom" and an empty
	// Plural: the caller resolves the resource with a RESTMapper.
	Type TypeInfo
	// ForceConflict is the entry's forceConflict; nil when the entry does not say.
	ForceConflict *bool
}

// GroupResource is the object's group and plural resource name, as declared in
// managedResources; Resource is empty when Type.Plural is (see Object.Type).
func (o Object) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: o.Obj.GroupVersionKind().Group, Resource: o.Type.Plural}
}

// Build turns one entry into an object: the intent form ({type, fields, forceConflict}) or
// the full object form ({apiVersion, kind, metadata: {name}, ...}). Every problem is a
// *FieldError; use AtEntry to say which entry it was.
func Build(raw map[string]any, opts Options) (Object, error) {
	_, hasFields := raw["fields"]
	_, hasType := raw["type"]
	_, hasKind := raw["kind"]
	_, hasAPIVersion := raw["apiVersion"]
	switch {
	case hasFields:
	case hasKind || hasAPIVersion:
		// A full object may have a top-level type of its own (a Secret's).
		return buildFull(raw, opts)
	case !hasType:
		return Object{}, &FieldError{Msg: "neither the intent form (type and fields) nor the full " +
			"object form (apiVersion, kind and metadata.name)"}
	}
	r := &reader{m: raw}
	r.check([]string{"type", "fields"}, []string{"forceConflict"})
	typ := r.str("type")
	fields := r.mapping("fields")
	force := r.bool("forceConflict")
	if r.err != nil {
		if t, ok := raw["type"].(string); ok {
			r.err.Type = t
		}
		return Object{}, r.err
	}
	o, err := BuildIntent(typ, fields, opts)
	o.ForceConflict = force
	return o, err
}

// BuildIntent builds the object of intent type typ ("deployment") from its fields; the
// declarative reconciler calls it with the type of the block an entry is in.
func BuildIntent(typ string, fields map[string]any, opts Options) (Object, error) {
	t, ok := Lookup(typ)
	if !ok {
		names := typeNames()
		msg := fmt.Sprintf("unknown type %q (known types: %s)", typ, strings.Join(names, ", "))
		if near := suggest.Nearest(typ, names); near != "" {
			msg = fmt.Sprintf("unknown type %q (did you mean %q?)", typ, near)
		}
		return Object{}, &FieldError{Field: "type", Msg: msg}
	}
	if t.Type == Custom {
		return buildCustom(fields, opts)
	}
	r := &reader{typ: t.Type, m: fields}
	obj := buildTyped(r, t, opts)
	if r.err != nil {
		return Object{}, r.err
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return Object{}, &FieldError{Type: t.Type, Msg: err.Error()}
	}
	return Object{Obj: u, Type: t}, nil
}

// objectLabels merges label sets left to right and adds the managed-by label.
func objectLabels(sets ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	out[naming.ManagedByLabel] = naming.ManagedBy
	return out
}

// typeNames lists the intent types, sorted, for messages.
func typeNames() []string {
	names := make([]string, 0, len(types))
	for _, t := range types {
		names = append(names, t.Type)
	}
	return names
}
