package validate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/suggest"
)

// standIns are valid values for fields whose Katalog value is a template (known only at
// reconcile time) or already reported, so that the entry can still be built and its other
// fields checked. The apiVersion is of no built-in group: a custom entry's literal kind
// ("Service") must not make it a built-in type checked strictly.
var standIns = map[string]any{
	"name": "validate", "image": "validate", "schedule": "* * * * *", "serviceName": "validate",
	"apiVersion": "validate.invalid/v1", "kind": "Validate", "port": 80, "servicePort": 80,
	"storage": "1Gi", "data": map[string]any{}, "stringData": map[string]any{},
}

// entry builds one declarative entry the way the reconciler will, with templated values
// stood in for, so that what is wrong whatever the CR holds (an unknown or missing field, a
// literal of the wrong type or out of range) is found here, not at reconcile time. The
// builder stops at the first problem; that field is then set aside and the entry built
// again, so every field's problem is reported.
func (k *checker) entry(at string, t resources.TypeInfo, e map[string]any) {
	required, optional := t.Fields()
	hint := fmt.Sprintf("a %s entry takes %s (required) and %s", t.Type,
		strings.Join(required, ", "), strings.Join(optional, ", "))
	fields := map[string]any{}
	for key, v := range e {
		switch {
		case !hasTemplate(v):
			fields[key] = v
		case standIns[key] != nil:
			fields[key] = standIns[key]
		}
		// Any other templated field is left out: its type is known only at reconcile time.
	}
	setAside := map[string]bool{}
	for {
		_, err := resources.BuildIntent(t.Type, fields, resources.OptionsFor("default", "validate"))
		if err == nil {
			return
		}
		var fe *resources.FieldError
		if !errors.As(err, &fe) || fe.Field == "" {
			k.errorAt(katalog.RuleDeclarativeEntry, at, err.Error(), hint)
			return
		}
		key, _, _ := strings.Cut(fe.Field, ".")
		key, _, _ = strings.Cut(key, "[")
		if setAside[key] {
			return // a stand-in refused: a bug here, not in the Katalog; stop rather than loop
		}
		setAside[key] = true
		// The path names the entry and field already: the message need not repeat them.
		msg := fe.Msg
		if msg == "required" {
			msg = "required field missing"
		}
		k.errorAt(katalog.RuleDeclarativeEntry, at+"."+fe.Field, t.Type+" entry: "+msg, hint)
		if near := suggest.Nearest(key, required); near != "" && fields[near] == nil && fe.Field == key {
			// "imag" is reported as a typo of image: not also image as missing.
			fields[near] = standIns[near]
		}
		switch {
		case slices.Contains(required, key) && standIns[key] != nil:
			fields[key] = standIns[key]
		case !slices.Contains(required, key):
			delete(fields, key)
		default:
			return
		}
	}
}

// hasTemplate reports whether v, or any string inside it, holds a template.
func hasTemplate(v any) bool {
	switch x := v.(type) {
	case string:
		return render.IsTemplate(x)
	case map[string]any:
		for _, e := range x {
			if hasTemplate(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, hasTemplate)
	}
	return false
}
