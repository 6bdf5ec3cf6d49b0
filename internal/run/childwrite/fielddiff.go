package childwrite

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/kobj"
)

// serverMetadata are the metadata fields every write moves: not a change a plan shows.
var serverMetadata = []string{"resourceVersion", "managedFields", "generation", "uid", "creationTimestamp", "selfLink"}

// changedFields lists the paths where after differs from before, sorted
// ("spec.template.spec.containers[0].image"), leaving out status and the metadata every
// write moves. A list of another length is one change at its own path.
// ork's applied annotation moves with every change: it is listed only when nothing else
// changes (the first write of an older ork's child, which adds it). The decision annotation
// is never listed: every write carries a new one, and it says who wrote, not what.
func changedFields(before, after map[string]any) []string {
	before, after = without(before, naming.DecisionAnnotation), without(after, naming.DecisionAnnotation)
	if out := fieldChanges(without(before, naming.AppliedAnnotation), without(after, naming.AppliedAnnotation)); len(out) > 0 {
		return out
	}
	return fieldChanges(before, after)
}

// without is obj without ork's annotation key, shallow-copied where it differs.
func without(obj map[string]any, key string) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if _, ok := ann[key]; !ok {
		return obj
	}
	ann = maps.Clone(ann)
	delete(ann, key)
	md = maps.Clone(md)
	if len(ann) == 0 {
		delete(md, "annotations")
	} else {
		md["annotations"] = ann
	}
	obj = maps.Clone(obj)
	obj["metadata"] = md
	return obj
}

func fieldChanges(before, after map[string]any) []string {
	var out []string
	for _, k := range unionKeys(before, after) {
		switch k {
		case "status":
			continue
		case "metadata":
			a, _ := before[k].(map[string]any)
			b, _ := after[k].(map[string]any)
			for _, mk := range unionKeys(a, b) {
				if !slices.Contains(serverMetadata, mk) {
					out = diffValue(out, "metadata."+PathKey(mk), a[mk], b[mk])
				}
			}
			continue
		}
		out = diffValue(out, PathKey(k), before[k], after[k])
	}
	slices.Sort(out)
	return out
}

func diffValue(out []string, path string, a, b any) []string {
	if kobj.EqualJSON(a, b) {
		return out
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			for _, k := range unionKeys(x, y) {
				out = diffValue(out, path+"."+PathKey(k), x[k], y[k])
			}
			return out
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			for i := range x {
				out = diffValue(out, fmt.Sprintf("%s[%d]", path, i), x[i], y[i])
			}
			return out
		}
	}
	return append(out, path)
}

func unionKeys(a, b map[string]any) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// PathKey writes a key as a dot-path segment: a dot inside it is escaped, as in excludes.
func PathKey(k string) string { return strings.ReplaceAll(k, ".", `\.`) }
