package katalogschema

import (
	"reflect"
	"strings"
)

// field is one field of the Katalog's Go types, by its path in a Katalog file.
type field struct {
	// path joins json names with '.', "*" for a map's values and "[]" after a list:
	// spec.crds.*.operatorBox.reconcile.remote.managedResources[].plural.
	path string
	name string
	typ  reflect.Type // pointers removed
}

// fieldsOf lists t's fields depth first, in declaration order. It descends into structs, and
// into maps and lists of structs; other maps and lists are leaves.
func fieldsOf(t reflect.Type, prefix string) []field {
	var out []field
	for _, f := range ownFields(t, prefix) {
		out = append(out, f)
		if elem, sub := structElem(f.typ, f.path); elem != nil {
			out = append(out, fieldsOf(elem, sub)...)
		}
	}
	return out
}

// ownFields lists the fields of struct t in a Katalog file (by json name), at prefix.
func ownFields(t reflect.Type, prefix string) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{path: join(prefix, name), name: name, typ: deref(sf.Type)})
	}
	return out
}

// structElem returns the struct to descend into below a field of type t at path p, and its
// path prefix: the struct itself, a map's values (p.*) or a list's items (p[]).
func structElem(t reflect.Type, p string) (reflect.Type, string) {
	switch t.Kind() {
	case reflect.Struct:
		return t, p
	case reflect.Map:
		if e := deref(t.Elem()); e.Kind() == reflect.Struct {
			return e, p + ".*"
		}
	case reflect.Slice:
		if e := deref(t.Elem()); e.Kind() == reflect.Struct {
			return e, p + "[]"
		}
	}
	return nil, ""
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// docKind says which type words of the docs' type column fit the Go type: the docs say
// "string", "path", "duration", "bool", "int", "list…", "map…", "object" or "{…}".
func docKindFits(t reflect.Type, typ string) bool {
	first := strings.ToLower(strings.TrimLeft(typ, "`"))
	switch t.Kind() {
	case reflect.String:
		return hasAnyPrefix(first, "string", "path", "duration")
	case reflect.Bool:
		return strings.HasPrefix(first, "bool")
	case reflect.Int, reflect.Int32, reflect.Int64:
		return strings.HasPrefix(first, "int")
	case reflect.Float64:
		return strings.HasPrefix(first, "number")
	case reflect.Slice:
		return strings.HasPrefix(first, "list")
	case reflect.Map:
		return strings.HasPrefix(first, "map")
	case reflect.Struct:
		return hasAnyPrefix(first, "object", "{")
	}
	return false
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
