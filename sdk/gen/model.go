// Package gen writes the reconciler SDKs' wire types (the PreparedRequest ork sends, the
// RemoteReconcileResult it reads, the fields of each intent type) from schema/*.json, in Go
// (sdk/go/reconciler), Python (sdk/python/ork_reconciler) and TypeScript (sdk/ts/src), so
// that a schema change reaches the SDKs by `go generate ./sdk/...` and a stale SDK fails the
// tests. Its declaration writers (GoDecls, PythonDecls, TypeScriptDecls) also write what
// `ork gen types` makes of a Katalog's CRDs.
package gen

//go:generate go run ./sdkgen -go ../go/reconciler/wire_gen.go -python ../python/ork_reconciler/_wire.py -ts ../ts/src/wire.gen.ts

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/schema"
)

// Kind is the shape of a Type.
type Kind int

// Kinds of Type.
const (
	KindString Kind = iota
	KindInt
	KindFloat
	KindBool
	KindAny // any JSON value
	KindRaw // any JSON value, kept undecoded (a custom resource's spec and status)
	KindMap
	KindList
	KindStruct
	KindEnum
	KindIntOrString
	KindResource // one entry of a result's resources: an intent or a full object
)

// Type is the type of a field.
type Type struct {
	Kind Kind
	// Elem is the element type of a Map or List.
	Elem *Type
	// Name names a Struct or Enum.
	Name string
}

// Field is one property of a Struct.
type Field struct {
	JSON     string
	Doc      string
	Type     Type
	Required bool
	// Flag is a property that is either absent or true (prepared.dryRun).
	Flag bool
	// Nullable is a property that may be null when present.
	Nullable bool
}

// Struct is an object with known properties.
type Struct struct {
	Name   string
	Doc    string
	Fields []Field
	// OneRequired are groups of which at least one field must be set (a Secret's data or
	// stringData).
	OneRequired [][]string
}

// EnumType is a closed set of strings.
type EnumType struct {
	Name   string
	Doc    string
	Values []string
}

// Intent is one intent type and the struct of its fields.
type Intent struct {
	Type   string // "deployment"
	Name   string // "Deployment"
	Fields string // "DeploymentFields"
	Doc    string
}

// Model is the wire contract as types, what both languages are written from.
type Model struct {
	ContractVersion string
	Structs         []*Struct
	Enums           []*EnumType
	Intents         []Intent
}

// Load builds the Model of the embedded schemas.
func Load() (*Model, error) {
	return Build(schema.PreparedRequest(), schema.RemoteReconcileResult())
}

// Build builds the Model of a request and a result schema.
func Build(requestSchema, resultSchema []byte) (*Model, error) {
	m := &Model{ContractVersion: remote.ContractVersion}
	req, err := root(requestSchema)
	if err != nil {
		return nil, fmt.Errorf("prepared-request schema: %w", err)
	}
	res, err := root(resultSchema)
	if err != nil {
		return nil, fmt.Errorf("remote-reconcile-result schema: %w", err)
	}
	for _, sc := range []struct {
		name string
		o    *object
	}{{"prepared-request", req}, {"remote-reconcile-result", res}} {
		if v := contractOf(sc.o.str("$id")); v != m.ContractVersion {
			return nil, fmt.Errorf("%s schema: $id %q carries contract version %q, ork speaks %q", sc.name, sc.o.str("$id"), v, m.ContractVersion)
		}
	}
	b := &builder{m: m, named: map[string]bool{}}
	b.defs = req.obj("$defs")
	if _, err := b.structOf("PreparedRequest", req); err != nil {
		return nil, fmt.Errorf("prepared-request schema: %w", err)
	}
	b.defs = res.obj("$defs")
	if _, err := b.structOf("Result", res); err != nil {
		return nil, fmt.Errorf("remote-reconcile-result schema: %w", err)
	}
	intent := b.defs.obj("intent")
	if intent == nil {
		return nil, fmt.Errorf("remote-reconcile-result schema: no $defs/intent")
	}
	if _, err := b.structOf("Intent", intent); err != nil {
		return nil, fmt.Errorf("remote-reconcile-result schema: $defs/intent: %w", err)
	}
	for _, typ := range intent.obj("properties").obj("type").strings("enum") {
		def := b.defs.obj(typ + "Fields")
		if def == nil {
			return nil, fmt.Errorf("remote-reconcile-result schema: intent type %q has no $defs/%sFields", typ, typ)
		}
		name := GoName(typ)
		if _, err := b.structOf(name+"Fields", def); err != nil {
			return nil, fmt.Errorf("remote-reconcile-result schema: $defs/%sFields: %w", typ, err)
		}
		m.Intents = append(m.Intents, Intent{Type: typ, Name: name, Fields: name + "Fields", Doc: def.str("description")})
	}
	return m, nil
}

// contractOf is the contract parameter of a schema's $id ("1" of "…/x.schema.json?contract=1"),
// "" when there is none.
func contractOf(id string) string {
	u, err := url.Parse(id)
	if err != nil {
		return ""
	}
	return u.Query().Get("contract")
}

func root(data []byte) (*object, error) {
	v, err := decodeOrdered(data)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return o, nil
}

// names are the Go names of schema places that a name made from the property would spell
// badly; the key is the parent's name and the property.
var names = map[string]string{
	"PreparedRequest.gvk":       "GVK",
	"PreparedRequest.object":    "Object",
	"PreparedRequest.prepared":  "Prepared",
	"Prepared.trigger":          "Trigger",
	"Prepared.lastApply":        "AppliedResource",
	"AppliedResource.outcome":   "ApplyOutcome",
	"Result.result":             "ResultKind",
	"Result.operation":          "PendingOperation",
	"Prepared.operation":        "HeldOperation",
	"HeldOperation.callback":    "OperationCallback",
	"Prepared.callback":         "OperationCallback",
	"Intent.type":               "IntentType",
	"ComputeResources.requests": "ResourceList",
	"ComputeResources.limits":   "ResourceList",
}

// renames are the names of types reached through a $defs name that is a plural.
var renames = map[string]string{"AccessModes": "AccessMode"}

// fieldTypes overrule the schema's type of a field: an intent entry's fields are one of the
// <Type>Fields types, which the builders choose.
var fieldTypes = map[string]Type{"Intent.fields": {Kind: KindAny}}

// scalarDefs are the $defs of the result schema whose JSON Schema is looser than the type an
// author should write (a string that spells a number is accepted because templates render
// to strings): the SDKs write the strict form.
var scalarDefs = map[string]Type{
	"string":     {Kind: KindString},
	"integer":    {Kind: KindInt},
	"boolean":    {Kind: KindBool},
	"portOrName": {Kind: KindIntOrString},
	"quantity":   {Kind: KindString},
	"stringMap":  {Kind: KindMap, Elem: &Type{Kind: KindString}},
	"stringList": {Kind: KindList, Elem: &Type{Kind: KindString}},
	"object":     {Kind: KindMap, Elem: &Type{Kind: KindAny}},
	"any":        {Kind: KindAny},
	"resource":   {Kind: KindResource},
}

type builder struct {
	m     *Model
	defs  *object
	named map[string]bool
}

// structOf adds the Struct name made of the object schema s (once per name).
func (b *builder) structOf(name string, s *object) (Type, error) {
	t := Type{Kind: KindStruct, Name: name}
	if b.named[name] {
		return t, nil
	}
	b.named[name] = true
	st := &Struct{Name: name, Doc: s.str("description")}
	b.m.Structs = append(b.m.Structs, st)
	required := s.strings("required")
	props := s.obj("properties")
	if props == nil {
		return t, fmt.Errorf("%s: no properties", name)
	}
	for _, k := range props.keys {
		ps, ok := props.get(k).(*object)
		if !ok { // `true`: any value, kept undecoded
			st.Fields = append(st.Fields, Field{JSON: k, Type: Type{Kind: KindRaw}, Required: slices.Contains(required, k)})
			continue
		}
		pname, ok := names[name+"."+k]
		if !ok {
			pname = name + GoName(k)
		}
		ft, ok := fieldTypes[name+"."+k]
		if !ok {
			var err error
			if ft, err = b.typeOf(pname, ps); err != nil {
				return t, fmt.Errorf("%s.%s: %w", name, k, err)
			}
		}
		doc := ps.str("description")
		if doc == "" {
			if ref := refOf(ps); ref != "" {
				doc = b.defs.obj(ref).str("description")
			}
		}
		flag := ps.get("const") == true
		st.Fields = append(st.Fields, Field{JSON: k, Doc: doc, Type: ft, Required: slices.Contains(required, k), Flag: flag})
	}
	for _, alt := range anyOf(s) {
		if r := alt.strings("required"); len(r) > 0 {
			st.OneRequired = append(st.OneRequired, r)
		}
	}
	if len(st.OneRequired) > 0 {
		// The alternatives together are one rule: at least one group is set.
		var all []string
		for _, g := range st.OneRequired {
			all = append(all, g...)
		}
		st.OneRequired = [][]string{all}
	}
	return t, nil
}

func anyOf(s *object) []*object {
	l, _ := s.get("anyOf").([]any)
	var out []*object
	for _, v := range l {
		if o, ok := v.(*object); ok {
			out = append(out, o)
		}
	}
	return out
}

// refOf is the $defs name s refers to, directly or as the one non-"present" part of an
// allOf; "" when none.
func refOf(s *object) string {
	if r := s.str("$ref"); r != "" {
		return strings.TrimPrefix(r, "#/$defs/")
	}
	l, _ := s.get("allOf").([]any)
	for _, v := range l {
		if o, ok := v.(*object); ok {
			if r := strings.TrimPrefix(o.str("$ref"), "#/$defs/"); r != "" && r != "present" {
				return r
			}
		}
	}
	return ""
}

// typeOf is the Type of the schema s of a value; name names it when it is a struct or an
// enum.
func (b *builder) typeOf(name string, s *object) (Type, error) {
	if ref := refOf(s); ref != "" {
		if t, ok := scalarDefs[ref]; ok {
			return t, nil
		}
		def := b.defs.obj(ref)
		if def == nil {
			return Type{}, fmt.Errorf("$ref to a missing $defs/%s", ref)
		}
		if _, ok := names["ComputeResources."+ref]; !ok {
			name = GoName(ref)
		}
		return b.typeOf(name, def)
	}
	if s.get("const") == true {
		return Type{Kind: KindBool}, nil
	}
	if values := s.strings("enum"); len(values) > 0 {
		return b.enumOf(name, s.str("description"), values), nil
	}
	switch typeName(s) {
	case "string":
		return Type{Kind: KindString}, nil
	case "integer":
		return Type{Kind: KindInt}, nil
	case "number":
		return Type{Kind: KindFloat}, nil
	case "boolean":
		return Type{Kind: KindBool}, nil
	case "array":
		items, ok := s.get("items").(*object)
		if !ok {
			return Type{Kind: KindList, Elem: &Type{Kind: KindAny}}, nil
		}
		elem, err := b.typeOf(name, items)
		return Type{Kind: KindList, Elem: &elem}, err
	case "object":
		if s.obj("properties") != nil {
			return b.structOf(name, s)
		}
		if ap, ok := s.get("additionalProperties").(*object); ok {
			elem, err := b.typeOf(name, ap)
			return Type{Kind: KindMap, Elem: &elem}, err
		}
		return Type{Kind: KindMap, Elem: &Type{Kind: KindAny}}, nil
	}
	return Type{}, fmt.Errorf("no type for schema %v", s.keys)
}

// typeName is the one JSON type of s besides null; "" for none or several.
func typeName(s *object) string {
	switch t := s.get("type").(type) {
	case string:
		return t
	case []any:
		var out []string
		for _, v := range t {
			if v != "null" {
				out = append(out, fmt.Sprint(v))
			}
		}
		if len(out) == 1 {
			return out[0]
		}
	}
	return ""
}

func (b *builder) enumOf(name, doc string, values []string) Type {
	if r, ok := renames[name]; ok {
		name = r
	}
	t := Type{Kind: KindEnum, Name: name}
	if b.named[name] {
		return t
	}
	b.named[name] = true
	vs := []string{}
	for _, v := range values {
		if v != "" {
			vs = append(vs, v)
		}
	}
	b.m.Enums = append(b.m.Enums, &EnumType{Name: name, Doc: doc, Values: vs})
	return t
}

// words splits a JSON name into its words: "apiVersion" -> api, Version;
// "persistentvolumeclaim" stays one word (see compound); a character that is no letter or
// digit separates words and is dropped ("app.kubernetes.io/name" -> app, kubernetes, io,
// name).
func words(s string) []string {
	var out []string
	word := ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'):
			if word != "" {
				out = append(out, word)
			}
			word = ""
			continue
		case word != "" && c >= 'A' && c <= 'Z' && !(s[i-1] >= 'A' && s[i-1] <= 'Z'):
			out = append(out, word)
			word = ""
		}
		word += string(c)
	}
	if word != "" || len(out) == 0 {
		out = append(out, word)
	}
	return out
}

// initialisms are written in capitals in Go names.
var initialisms = map[string]string{"api": "API", "cpu": "CPU", "url": "URL", "uid": "UID", "id": "ID", "ok": "OK", "gvk": "GVK"}

// compound are the intent types whose Kubernetes kind has more words than the type name
// shows.
var compound = map[string]string{
	"configmap":             "ConfigMap",
	"cronjob":               "CronJob",
	"daemonset":             "DaemonSet",
	"persistentvolumeclaim": "PersistentVolumeClaim",
	"serviceaccount":        "ServiceAccount",
	"statefulset":           "StatefulSet",
}

// GoName is the exported Go name of a JSON name: "apiVersion" -> "APIVersion",
// "statefulset" -> "StatefulSet", "x-mode" -> "XMode"; one that would start with a digit
// starts with "X".
func GoName(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		lw := strings.ToLower(w)
		switch {
		case w == "":
		case initialisms[lw] != "":
			b.WriteString(initialisms[lw])
		case compound[lw] != "":
			b.WriteString(compound[lw])
		default:
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	out := b.String()
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "X" + out
	}
	return out
}

// snakeName is the Python keyword argument of a JSON name: "apiVersion" -> "api_version".
func snakeName(s string) string {
	ws := words(s)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return strings.Join(ws, "_")
}
