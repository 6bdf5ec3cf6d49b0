package planner

import (
	"github.com/orkspace/ork/internal/resources"
)

// Build builds every entry of a remote answer for the custom resource namespace/name by the
// intent builders, as ork run does before planning anything. It returns the objects, or nil
// and every problem (stage Invalid) when ork would apply nothing.
func Build(entries []map[string]any, namespace, name string) ([]resources.Object, []EntryError) {
	opts := resources.OptionsFor(namespace, name)
	objs := make([]resources.Object, 0, len(entries))
	var errs []EntryError
	for i, raw := range entries {
		o, err := resources.Build(raw, opts)
		if err != nil {
			errs = append(errs, EntryError{List: "resources", Index: i, Stage: Invalid, Err: err})
			continue
		}
		objs = append(objs, o)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return objs, nil
}
