package blame

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/orkspace/ork/internal/decision"
)

// Manager is a managedFields entry that owns the field.
type Manager struct {
	Manager     string       `json:"manager"`
	Operation   string       `json:"operation"`
	Subresource string       `json:"subresource,omitempty"`
	Time        *metav1.Time `json:"time,omitempty"`
}

// owners are the entries of managed that own the field at p of obj, most recent first.
func owners(managed []metav1.ManagedFieldsEntry, obj map[string]any, p decision.Path) ([]Manager, error) {
	var out []Manager
	for _, e := range managed {
		if e.FieldsV1 == nil {
			continue
		}
		var s fieldpath.Set
		if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", e.Manager, err)
		}
		if owns(&s, obj, p) {
			out = append(out, Manager{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource, Time: e.Time})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return after(out[i].Time, out[j].Time) })
	return out, nil
}

func after(a, b *metav1.Time) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	}
	return a.After(b.Time)
}

// owns reports whether s holds the field at p of obj, or the whole of an atomic value above
// it, or (for a path to a map or list) part of it. A list item is matched to the set's
// element for it by its keys, its value or its index, whichever the set uses: the item at
// index i of obj is the one the set names by its key.
func owns(s *fieldpath.Set, obj any, p decision.Path) bool {
	node, cur := s, obj
	for i, seg := range p {
		pe, ok := element(node, cur, seg)
		if !ok {
			return false
		}
		children, hasChildren := node.Children.Get(pe)
		if node.Members.Has(pe) && (i == len(p)-1 || !hasChildren) {
			return true
		}
		if !hasChildren {
			return false
		}
		if i == len(p)-1 {
			return true
		}
		node, cur = children, step(cur, seg)
	}
	return false
}

// element is the set's path element for seg at cur.
func element(s *fieldpath.Set, cur any, seg decision.Segment) (fieldpath.PathElement, bool) {
	if !seg.IsIndex {
		return fieldpath.FieldNameElement(seg.Key), true
	}
	list, _ := cur.([]any)
	if seg.Index >= len(list) {
		return fieldpath.PathElement{}, false
	}
	item := list[seg.Index]
	match := func(pe fieldpath.PathElement) bool {
		switch {
		case pe.Key != nil:
			m, ok := item.(map[string]any)
			if !ok {
				return false
			}
			for _, f := range *pe.Key {
				if !value.Equals(f.Value, value.NewValueInterface(m[f.Name])) {
					return false
				}
			}
			return true
		case pe.Value != nil:
			return value.Equals(*pe.Value, value.NewValueInterface(item))
		case pe.Index != nil:
			return *pe.Index == seg.Index
		}
		return false
	}
	for pe := range s.Children.All() {
		if match(pe) {
			return pe, true
		}
	}
	for pe := range s.Members.All() {
		if match(pe) {
			return pe, true
		}
	}
	return fieldpath.PathElement{}, false
}

func step(cur any, seg decision.Segment) any {
	if seg.IsIndex {
		list, _ := cur.([]any)
		if seg.Index < len(list) {
			return list[seg.Index]
		}
		return nil
	}
	m, _ := cur.(map[string]any)
	return m[seg.Key]
}
