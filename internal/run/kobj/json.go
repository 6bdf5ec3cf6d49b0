package kobj

// EqualJSON compares two JSON-like values (as decoded into unstructured objects) without
// copying them. Numbers compare by value: the same status decoded by the apiserver's client
// (int64) and by another decoder (float64) is equal.
func EqualJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, va := range x {
			vb, ok := y[k]
			if !ok || !EqualJSON(va, vb) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, string, bool:
		return a == b
	}
	fa, okA := Number(a)
	fb, okB := Number(b)
	return okA && okB && fa == fb
}

func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// MergeChanges reports whether merging patch into base (RFC 7386, a JSON merge patch)
// would change base: a null in patch removes a key, a map merges, anything else replaces.
func MergeChanges(base map[string]any, patch map[string]any) bool {
	for k, pv := range patch {
		bv, exists := base[k]
		switch p := pv.(type) {
		case nil:
			if exists {
				return true
			}
		case map[string]any:
			bm, ok := bv.(map[string]any)
			if !ok {
				return true
			}
			if MergeChanges(bm, p) {
				return true
			}
		default:
			if !exists || !EqualJSON(bv, pv) {
				return true
			}
		}
	}
	return false
}
