// Package dotpath parses the dot-paths of payload.*.exclude ("metadata.managedFields") and
// removes them from a deep copy of an object.
package dotpath

import (
	"fmt"
	"strings"
)

// Path is a parsed dot-path: the keys from the root down.
type Path []string

// Parse splits p at dots; `\.` keeps a dot inside a key, as in
// metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration.
func Parse(p string) (Path, error) {
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("empty path")
	}
	var out Path
	var cur strings.Builder
	escaped := false
	for i, r := range p {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '.':
			if cur.Len() == 0 {
				return nil, fmt.Errorf("empty segment at offset %d in %q", i, p)
			}
			out = append(out, cur.String())
			cur.Reset()
		case r == '[' || r == ']' || r == ' ' || r == '*':
			return nil, fmt.Errorf("unsupported character %q at offset %d in %q (paths are dot-separated keys)", r, i, p)
		default:
			cur.WriteRune(r)
		}
	}
	if escaped {
		return nil, fmt.Errorf("trailing backslash in %q", p)
	}
	if cur.Len() == 0 {
		return nil, fmt.Errorf("empty last segment in %q", p)
	}
	return append(out, cur.String()), nil
}

// Without returns a deep copy of obj with every path removed. Paths that do not exist are
// ignored; obj itself is never modified.
func Without(obj map[string]any, paths []Path) map[string]any {
	out := deepCopy(obj).(map[string]any)
	for _, p := range paths {
		remove(out, p)
	}
	return out
}

func remove(m map[string]any, p Path) {
	for i, key := range p {
		if i == len(p)-1 {
			delete(m, key)
			return
		}
		next, ok := m[key].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
