package validate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/suggest"
)

// templates checks every string inside v (maps and lists are walked) as a template.
func (k *checker) templates(at string, v any) {
	switch x := v.(type) {
	case string:
		k.template(at, x)
	case map[string]any:
		for key, e := range x {
			k.templates(at+"."+key, e)
		}
	case []any:
		for i, e := range x {
			k.templates(fmt.Sprintf("%s[%d]", at, i), e)
		}
	}
}

// template checks that text parses with ork's function set and, where the CRD schema is
// known, that the fields it reads exist.
func (k *checker) template(at, text string) {
	if !render.IsTemplate(text) {
		return
	}
	pos := k.crd.Source.Pos(katalog.CRDPath(k.crd.Name, at))
	paths, err := render.FieldPaths(fmt.Sprintf("%s:%d", k.crd.Source.Path, pos.Line), text)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // drop render's "parse template:" prefix; "template does not parse" says it
		}
		k.errorAt(katalog.RuleTemplateSyntax, at, "template does not parse: "+err.Error(),
			"templates are Go text/template over the custom resource (.metadata.name, .spec.x); functions: "+
				strings.Join(render.FuncNames(), ", "))
		return
	}
	k.tmpls = append(k.tmpls, tmpl{at: at, text: text})
	if k.schema == nil {
		return
	}
	for _, p := range paths {
		segs := strings.Split(strings.TrimPrefix(p, "."), ".")
		if segs[0] != "spec" && segs[0] != "status" {
			continue // .metadata is not in CRD schemas; other roots are relative to with/range
		}
		missing, known := missingField(k.schema, segs)
		if missing == "" {
			continue
		}
		hint := "the fields defined there are: " + strings.Join(known, ", ")
		if near := suggest.Nearest(missing[strings.LastIndex(missing, ".")+1:], known); near != "" {
			hint = fmt.Sprintf("did you mean %s%s?", missing[:strings.LastIndex(missing, ".")+1], near)
		}
		k.warnAt(katalog.RuleTemplateField, at, fmt.Sprintf("template reads %s, which the CRD schema does not define", missing), hint)
	}
}

// missingField walks segs down the schema s. It returns the first prefix of the path that
// the schema does not define, with the field names defined at that level; "" when the
// schema defines the path or cannot tell (x-kubernetes-preserve-unknown-fields, maps, or
// objects without declared properties).
func missingField(s *apiextensionsv1.JSONSchemaProps, segs []string) (string, []string) {
	for i, seg := range segs {
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
			return "", nil
		}
		if len(s.Properties) == 0 {
			if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
				return "", nil
			}
			s = s.AdditionalProperties.Schema // a map: seg is any key
			continue
		}
		child, ok := s.Properties[seg]
		if !ok {
			return "." + strings.Join(segs[:i+1], "."), slices.Sorted(maps.Keys(s.Properties))
		}
		s = &child
	}
	return "", nil
}
