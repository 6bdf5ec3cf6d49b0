// Package dotpath parses the dot-paths of payload.*.exclude ("metadata.managedFields"); the
// remote reconciler removes them from the copy of an object it sends.
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
