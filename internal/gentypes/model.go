package gentypes

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/sdk/gen"
)

// builder collects the types of one generation, each name once.
type builder struct {
	structs []*gen.Struct
	enums   []*gen.EnumType
	names   map[string]bool
	// at is the type of each schema place reached from a custom resource, by its Kind and
	// dot path ("WebApp spec.replicas"), for the args that refer to one.
	at map[string]at
}

// at is a schema place: its type, and whether it can be missing from a custom resource (an
// optional property on the way to it).
type at struct {
	t        gen.Type
	optional bool
}

func newBuilder() *builder {
	return &builder{names: map[string]bool{}, at: map[string]at{}}
}

// unique is name, or name with the first free number after it.
func (b *builder) unique(name string) string {
	n := name
	for i := 2; b.names[n]; i++ {
		n = fmt.Sprintf("%s%d", name, i)
	}
	b.names[n] = true
	return n
}

func (b *builder) addStruct(s *gen.Struct) gen.Type {
	b.structs = append(b.structs, s)
	return gen.Type{Kind: gen.KindStruct, Name: s.Name}
}

func str(k gen.Kind) gen.Type { return gen.Type{Kind: k} }

func mapOf(t gen.Type) gen.Type { return gen.Type{Kind: gen.KindMap, Elem: &t} }

func listOf(t gen.Type) gen.Type { return gen.Type{Kind: gen.KindList, Elem: &t} }

// objectMeta is the metadata of an object as far as a reconciler reads it; written once.
func (b *builder) objectMeta() gen.Type {
	const name = "ObjectMeta"
	if b.names[name] {
		return gen.Type{Kind: gen.KindStruct, Name: name}
	}
	b.names[name] = true
	s := &gen.Struct{Name: name, Doc: "ObjectMeta is the metadata of an object, the fields a reconciler reads."}
	for _, f := range []struct {
		json string
		t    gen.Type
	}{
		{"name", str(gen.KindString)},
		{"namespace", str(gen.KindString)},
		{"uid", str(gen.KindString)},
		{"resourceVersion", str(gen.KindString)},
		{"generation", str(gen.KindInt)},
		{"creationTimestamp", str(gen.KindString)},
		{"deletionTimestamp", str(gen.KindString)},
		{"labels", mapOf(str(gen.KindString))},
		{"annotations", mapOf(str(gen.KindString))},
		{"finalizers", listOf(str(gen.KindString))},
		{"ownerReferences", listOf(mapOf(str(gen.KindAny)))},
	} {
		s.Fields = append(s.Fields, gen.Field{JSON: f.json, Type: f.t})
	}
	return b.addStruct(s)
}

// resource adds the types of one CRD's custom resource: <Kind>, <Kind>Spec, <Kind>Status
// and the types their schema nests.
func (b *builder) resource(c *katalog.CRD) (kind string, t gen.Type) {
	kind = gen.GoName(c.Name)
	version := ""
	if c.APITypes != nil && c.APITypes.Kind != "" {
		kind = gen.GoName(c.APITypes.Kind)
		version = strings.TrimPrefix(c.APITypes.Group+"/"+c.APITypes.Version, "/")
	}
	name := b.unique(kind)
	root := c.Schema()
	s := &gen.Struct{Name: name, Doc: fmt.Sprintf("%s is a custom resource of the Katalog's CRD %s (%s %s).", name, c.Name, version, kind)}
	t = b.addStruct(s) // before the types it nests: the file reads from the top down
	s.Fields = []gen.Field{
		{JSON: "apiVersion", Type: str(gen.KindString)},
		{JSON: "kind", Type: str(gen.KindString)},
		{JSON: "metadata", Type: b.objectMeta()},
	}
	for _, part := range []string{"spec", "status"} {
		var ps *apiextensionsv1.JSONSchemaProps
		if root != nil {
			if p, ok := root.Properties[part]; ok {
				ps = &p
			}
		}
		f := gen.Field{JSON: part, Type: str(gen.KindAny)}
		if ps != nil {
			f.Doc = ps.Description
			f.Required = slices.Contains(root.Required, part)
			b.at[name+" "+part] = at{optional: !f.Required}
			f.Type = b.typeOf(name+gen.GoName(part), ps, name, part)
			b.at[name+" "+part] = at{t: f.Type, optional: !f.Required}
		}
		s.Fields = append(s.Fields, f)
	}
	return name, t
}

// typeOf is the type of the schema s at path (of the resource kind); name names it when
// it is a struct or an enum.
func (b *builder) typeOf(name string, s *apiextensionsv1.JSONSchemaProps, kind, path string) gen.Type {
	if s.XIntOrString {
		return str(gen.KindIntOrString)
	}
	if s.Type == "string" && len(s.Enum) > 0 {
		var values []string
		for _, v := range s.Enum {
			var text string
			if json.Unmarshal(v.Raw, &text) == nil && text != "" && !slices.Contains(values, text) {
				values = append(values, text)
			}
		}
		if len(values) > 0 {
			e := &gen.EnumType{Name: b.unique(name), Doc: s.Description, Values: values}
			b.enums = append(b.enums, e)
			return gen.Type{Kind: gen.KindEnum, Name: e.Name}
		}
	}
	switch s.Type {
	case "string":
		return str(gen.KindString)
	case "integer":
		return str(gen.KindInt)
	case "number":
		return str(gen.KindFloat)
	case "boolean":
		return str(gen.KindBool)
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return listOf(str(gen.KindAny))
		}
		return listOf(b.typeOf(name+"Item", s.Items.Schema, kind, path+"[]"))
	}
	if len(s.Properties) > 0 {
		return b.structOf(name, s, kind, path)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		return mapOf(b.typeOf(name+"Value", ap.Schema, kind, path+"{}"))
	}
	if s.Type == "object" {
		return mapOf(str(gen.KindAny))
	}
	return str(gen.KindAny)
}

func (b *builder) structOf(name string, s *apiextensionsv1.JSONSchemaProps, kind, path string) gen.Type {
	st := &gen.Struct{Name: b.unique(name), Doc: s.Description}
	t := b.addStruct(st) // before the types it nests
	parent := b.at[kind+" "+path]
	for _, k := range sortedKeys(s.Properties) {
		ps := s.Properties[k]
		sub := path + "." + k
		f := gen.Field{JSON: k, Doc: ps.Description, Required: slices.Contains(s.Required, k), Nullable: ps.Nullable}
		optional := parent.optional || !f.Required || ps.Nullable
		b.at[kind+" "+sub] = at{optional: optional}
		f.Type = b.typeOf(st.Name+gen.GoName(k), &ps, kind, sub)
		b.at[kind+" "+sub] = at{t: f.Type, optional: optional}
		st.Fields = append(st.Fields, f)
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fieldRef is a template that is one field reference: {{ .spec.replicas }}.
var fieldRef = regexp.MustCompile(`^\{\{-?\s*\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*-?\}\}$`)

// metadataTypes are the metadata fields an arg can refer to, and whether they are always
// there.
var metadataTypes = map[string]at{
	"metadata.name":            {t: str(gen.KindString)},
	"metadata.namespace":       {t: str(gen.KindString), optional: true},
	"metadata.uid":             {t: str(gen.KindString)},
	"metadata.generation":      {t: str(gen.KindInt), optional: true},
	"metadata.resourceVersion": {t: str(gen.KindString)},
	"apiVersion":               {t: str(gen.KindString)},
	"kind":                     {t: str(gen.KindString)},
}

// args adds <Kind>Args: each of reconcile.remote.args as ork sends it. A bare field
// reference of a scalar takes the field's type (null when the field can be missing); a
// template that is more renders to text (a number, true, false or null when it spells one,
// which the type cannot tell); a value that is no template is sent as written.
func (b *builder) args(kind string, args map[string]any) (gen.Type, bool) {
	if len(args) == 0 {
		return gen.Type{}, false
	}
	s := &gen.Struct{Name: b.unique(kind + "Args"), Doc: fmt.Sprintf(
		"%s are the args ork sends with a %s (prepared.args is the map of them). A bare field reference has the field's type; any other template renders to text, a number, a boolean or null when the text spells one.", kind+"Args", kind)}
	for _, k := range sortedKeys(args) {
		f := gen.Field{JSON: k, Required: true}
		f.Type, f.Nullable, f.Doc = b.argType(kind, args[k])
		s.Fields = append(s.Fields, f)
	}
	return b.addStruct(s), true
}

func (b *builder) argType(kind string, v any) (t gen.Type, nullable bool, doc string) {
	switch x := v.(type) {
	case bool:
		return str(gen.KindBool), false, ""
	case int, int32, int64:
		return str(gen.KindInt), false, ""
	case float64:
		if x == float64(int64(x)) {
			return str(gen.KindInt), false, ""
		}
		return str(gen.KindFloat), false, ""
	case nil:
		return str(gen.KindAny), true, ""
	case string:
		if !render.IsTemplate(x) {
			return str(gen.KindString), false, ""
		}
		m := fieldRef.FindStringSubmatch(x)
		if m == nil {
			return str(gen.KindString), false, x
		}
		place, ok := metadataTypes[m[1]]
		if !ok {
			place, ok = b.at[kind+" "+m[1]]
		}
		if !ok {
			return str(gen.KindAny), true, x + ": no such field in the CRD's schema, always null"
		}
		switch place.t.Kind {
		case gen.KindString, gen.KindInt, gen.KindFloat, gen.KindBool, gen.KindEnum, gen.KindIntOrString:
			return place.t, place.optional, x
		case gen.KindAny:
			return str(gen.KindAny), true, x
		}
		return str(gen.KindString), place.optional, x + ": not a scalar, so Go's text of it"
	}
	return str(gen.KindAny), false, "" // a map or list: its strings rendered each
}

// related adds <Kind>Related: for each payload.related entry its as, the objects ork found.
// An object of one of the Katalog's CRDs has that CRD's type; a ConfigMap or a Secret its
// own; any other a map.
func (b *builder) related(kind string, entries []katalog.Related, resources map[string]gen.Type, crds []*katalog.CRD) (gen.Type, bool) {
	if len(entries) == 0 {
		return gen.Type{}, false
	}
	s := &gen.Struct{Name: b.unique(kind + "Related"), Doc: fmt.Sprintf(
		"%s are the objects ork sends with a %s under prepared.related, per entry of payload.related.", kind+"Related", kind)}
	for _, e := range entries {
		elem := mapOf(str(gen.KindAny))
		for _, c := range crds {
			if c.APITypes != nil && c.APITypes.Group == e.Group &&
				((e.Kind != "" && c.APITypes.Kind == e.Kind) || (e.Plural != "" && c.APITypes.Plural == e.Plural)) {
				elem = resources[c.Name]
			}
		}
		if e.Group == "" && (e.Kind == "ConfigMap" || e.Plural == "configmaps") {
			elem = b.configMap("ConfigMap", "ConfigMap is a v1 ConfigMap.")
		}
		if e.Group == "" && (e.Kind == "Secret" || e.Plural == "secrets") {
			elem = b.configMap("Secret", "Secret is a v1 Secret; data holds base64, and is absent without allowSecrets.")
		}
		what := e.Kind
		if what == "" {
			what = e.Plural
		}
		doc := fmt.Sprintf("The %s found by name (at most one)", what)
		if e.Selector != nil {
			doc = fmt.Sprintf("The %s found by the selector (at most 100)", what)
		}
		if e.Required {
			doc += "; ork does not call without one."
		} else {
			doc += "; [] when none."
		}
		s.Fields = append(s.Fields, gen.Field{JSON: e.As, Doc: doc, Type: listOf(elem), Required: true})
	}
	return b.addStruct(s), true
}

// configMap adds the type of a ConfigMap or a Secret (named name), once.
func (b *builder) configMap(name, doc string) gen.Type {
	if b.names[name] {
		return gen.Type{Kind: gen.KindStruct, Name: name}
	}
	b.names[name] = true
	s := &gen.Struct{Name: name, Doc: doc, Fields: []gen.Field{
		{JSON: "apiVersion", Type: str(gen.KindString)},
		{JSON: "kind", Type: str(gen.KindString)},
		{JSON: "metadata", Type: b.objectMeta()},
		{JSON: "data", Type: mapOf(str(gen.KindString))},
	}}
	if name == "Secret" {
		s.Fields = append(s.Fields, gen.Field{JSON: "type", Type: str(gen.KindString)})
	} else {
		s.Fields = append(s.Fields, gen.Field{JSON: "binaryData", Type: mapOf(str(gen.KindString))})
	}
	return b.addStruct(s)
}
