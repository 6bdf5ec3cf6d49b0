package decision

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// ignored are the fields whose change is the apiserver's bookkeeping or another
// controller's report, never a decision: listing them would mark every write.
var ignored = [...]Path{
	{{Key: "metadata"}, {Key: "managedFields"}},
	{{Key: "metadata"}, {Key: "resourceVersion"}},
	{{Key: "metadata"}, {Key: "generation"}},
	{{Key: "metadata"}, {Key: "uid"}},
	{{Key: "metadata"}, {Key: "creationTimestamp"}},
	{{Key: "metadata"}, {Key: "annotations"}, {Key: Annotation}},
	{{Key: "status"}},
}

// FieldPaths lists the leaf paths whose value differs between before and after (either may
// be nil: a created or deleted object lists all its leaves), sorted, without ignored fields.
// A list is compared item by item by index; an empty map or list is a leaf.
func FieldPaths(before, after map[string]any) []string {
	var out []string
	diff(nil, asAny(before), asAny(after), &out)
	slices.Sort(out)
	return slices.Compact(out)
}

// asAny keeps a nil map a nil interface, so that a missing object has no leaves.
func asAny(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// diff walks depth first with one growing path: at is appended to in place (siblings
// reuse its slot) and only ever read, never kept, which saves a copy per node.
func diff(at Path, a, b any, out *[]string) {
	for _, ig := range ignored {
		if at.HasPrefix(ig) {
			return
		}
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap && (len(am) > 0 || len(bm) > 0) {
		for k, av := range am {
			diff(append(at, Segment{Key: k}), av, bm[k], out)
		}
		for k, bv := range bm {
			if _, ok := am[k]; !ok {
				diff(append(at, Segment{Key: k}), nil, bv, out)
			}
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && (len(al) > 0 || len(bl) > 0) {
		for i := range max(len(al), len(bl)) {
			diff(append(at, Segment{Index: i, IsIndex: true}), item(al, i), item(bl, i), out)
		}
		return
	}
	if reflect.DeepEqual(a, b) {
		return
	}
	// A value replaced by another of another shape, added or removed: the leaves of both.
	leaves(at, a, out)
	leaves(at, b, out)
}

func item(l []any, i int) any {
	if i < len(l) {
		return l[i]
	}
	return nil
}

func leaves(at Path, v any, out *[]string) {
	for _, ig := range ignored {
		if at.HasPrefix(ig) {
			return
		}
	}
	switch v := v.(type) {
	case nil:
		return
	case map[string]any:
		if len(v) > 0 {
			for k, c := range v {
				leaves(append(at, Segment{Key: k}), c, out)
			}
			return
		}
	case []any:
		if len(v) > 0 {
			for i, c := range v {
				leaves(append(at, Segment{Index: i, IsIndex: true}), c, out)
			}
			return
		}
	}
	if len(at) > 0 {
		*out = append(*out, at.String())
	}
}

// Fields are the changed field paths of one child. Its only constructor is ChangedFields
// (and decoding a log line, which accepts field paths only), so that no code can put a
// field's value where a path goes: the log of a Secret holds data.password, never what it
// is.
type Fields struct{ paths []string }

// ChangedFields are FieldPaths(before, after).
func ChangedFields(before, after map[string]any) Fields {
	return Fields{paths: FieldPaths(before, after)}
}

// Paths returns a copy of the paths.
func (f Fields) Paths() []string { return slices.Clone(f.paths) }

// Len is the number of paths.
func (f Fields) Len() int { return len(f.paths) }

// MarshalJSON writes the paths as a JSON array of strings.
func (f Fields) MarshalJSON() ([]byte, error) {
	if f.paths == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(f.paths)
}

// UnmarshalJSON reads a JSON array of field paths, refusing anything that is not one.
func (f *Fields) UnmarshalJSON(b []byte) error {
	var paths []string
	if err := json.Unmarshal(b, &paths); err != nil {
		return fmt.Errorf("fields: %w", err)
	}
	for _, p := range paths {
		if _, err := ParsePath(p); err != nil {
			return fmt.Errorf("fields: %w", err)
		}
	}
	f.paths = paths
	return nil
}
