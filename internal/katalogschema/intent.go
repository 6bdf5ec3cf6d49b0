package katalogschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/resources"
)

// intentDefs returns the schema's $defs: a template, the declarative blocks, and for their
// entries each intent type's fields (<type>Fields and the definitions they use) copied from
// the intent form's schema, where a template may stand for any value: ork checks a templated
// value only once it is rendered.
func intentDefs(intent []byte) (*obj, error) {
	var src struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(intent, &src); err != nil {
		return nil, fmt.Errorf("intent schema: %w", err)
	}
	blocks, entries := object(), object()
	var want []string
	for _, t := range resources.Types() {
		def := t.Type + "Fields"
		if _, ok := src.Defs[def]; !ok {
			return nil, fmt.Errorf("intent schema: no $defs/%s", def)
		}
		want = append(want, def)
		blocks.set(t.Block, object(
			"description", fmt.Sprintf("%s entries: each takes the fields of the %s intent type.", t.Block, t.Type),
			"type", []any{"array", "null"},
			"items", object("type", "object"),
		))
		entries.set(t.Block, object("items", object("$ref", "#/$defs/"+def)))
	}
	defs := object(
		"template", object(
			"description", "A Go text/template rendered against the custom resource, e.g. \"{{ .metadata.name }}\"; its value is known, and checked, only at reconcile time.",
			"type", "string",
			"pattern", `\{\{`,
		),
		"declarativeBlocks", object(
			"description", "The declarative reconciler's resources: block name -> entries in the intent form, their string values templates.",
			"type", []any{"object", "null"},
			"additionalProperties", false,
			"properties", blocks,
		),
		"declarativeEntries", object(
			"description", "Each block's entries have their intent type's fields (unless reconcile.remote makes ork ignore the blocks).",
			"properties", entries,
		),
	)
	copied := map[string]any{}
	for len(want) > 0 {
		name := want[0]
		want = want[1:]
		if _, done := copied[name]; done {
			continue
		}
		if _, mine := defs.get(name); mine {
			return nil, fmt.Errorf("intent schema: $defs/%s clashes with a definition of the Katalog schema", name)
		}
		def, ok := src.Defs[name]
		if !ok {
			return nil, fmt.Errorf("intent schema: $ref to missing $defs/%s", name)
		}
		copied[name] = def
		want = append(want, refs(def)...)
	}
	if q, ok := copied["quantity"].(map[string]any); ok {
		// The intent schema leaves a quantity's syntax to ork's builder, which validate runs.
		q["pattern"] = quantity
	}
	for _, name := range slices.Sorted(maps.Keys(copied)) {
		defs.set(name, templated(copied[name], copied, false))
	}
	return defs, nil
}

// refs lists the local $defs a schema refers to.
func refs(s any) []string {
	var out []string
	switch v := s.(type) {
	case map[string]any:
		for k, e := range v {
			if r, ok := e.(string); ok && k == "$ref" {
				out = append(out, strings.TrimPrefix(r, "#/$defs/"))
				continue
			}
			out = append(out, refs(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, refs(e)...)
		}
	}
	return out
}

// templated copies schema s, letting a template stand for each property value, list item
// and map value that s would otherwise refuse as a string; wrap says s itself is such a
// value.
func templated(s any, defs map[string]any, wrap bool) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				props[name] = templated(p, defs, true)
			}
			out[k] = props
		case "items", "additionalProperties":
			out[k] = templated(v, defs, true)
		case "allOf", "anyOf", "oneOf":
			var subs []any
			for _, e := range v.([]any) {
				subs = append(subs, templated(e, defs, false))
			}
			out[k] = subs
		default:
			out[k] = v
		}
	}
	if !wrap || acceptsStrings(m, defs) {
		return out
	}
	desc, hasDesc := out["description"]
	delete(out, "description")
	w := map[string]any{"anyOf": []any{out, map[string]any{"$ref": "#/$defs/template"}}}
	if hasDesc {
		w["description"] = desc
	}
	return w
}

// acceptsStrings reports whether schema s takes any string as it is, so a template needs
// no alternative: a type that includes string with nothing narrowing it, or a reference to
// such a definition, or allOf such schemas and "present" (not null or "").
func acceptsStrings(s map[string]any, defs map[string]any) bool {
	for k, v := range s {
		switch k {
		case "description", "examples", "title", "$comment":
		case "type":
			if !typeIncludes(v, "string") {
				return false
			}
		case "$ref":
			switch d := defs[strings.TrimPrefix(v.(string), "#/$defs/")].(type) {
			case bool:
				if !d {
					return false
				}
			case map[string]any:
				if !acceptsStrings(d, defs) {
					return false
				}
			default:
				return false
			}
		case "allOf":
			for _, e := range v.([]any) {
				em, ok := e.(map[string]any)
				if !ok || !acceptsStrings(em, defs) {
					return false
				}
			}
		case "not":
			// "present": not null and not "", which a template never is.
			n, ok := v.(map[string]any)
			if !ok || len(n) != 1 || n["enum"] == nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func typeIncludes(t any, name string) bool {
	switch v := t.(type) {
	case string:
		return v == name
	case []any:
		return slices.Contains(v, any(name))
	}
	return false
}
