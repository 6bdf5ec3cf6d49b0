package decision

import (
	"fmt"
	"strconv"
	"strings"
)

// Segment is one step of a field path: a map key, or an index into a list.
type Segment struct {
	Key     string
	Index   int
	IsIndex bool
}

// Path is a field path as ork writes it: keys joined by dots, list indexes in brackets, as
// spec.template.spec.containers[0].image. A dot, bracket or backslash inside a key is
// escaped with a backslash: metadata.labels.app\.kubernetes\.io/name.
type Path []Segment

func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		if s.IsIndex {
			fmt.Fprintf(&b, "[%d]", s.Index)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		for _, r := range s.Key {
			if r == '.' || r == '[' || r == ']' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// HasPrefix reports whether q is p or a path above it.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// ParsePath parses a field path written as Path.String writes it.
func ParsePath(s string) (Path, error) {
	var p Path
	var key strings.Builder
	inKey := false // a key is being read (possibly empty so far only at the start)
	flush := func(at int) error {
		if !inKey {
			return nil
		}
		if key.Len() == 0 {
			return fmt.Errorf("field path %q: empty key at offset %d", s, at)
		}
		p = append(p, Segment{Key: key.String()})
		key.Reset()
		inKey = false
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("field path %q: trailing backslash", s)
			}
			i++
			key.WriteByte(s[i])
			inKey = true
		case '.':
			if err := flush(i); err != nil {
				return nil, err
			}
			if len(p) == 0 || i+1 == len(s) {
				return nil, fmt.Errorf("field path %q: empty key at offset %d", s, i)
			}
			inKey = true
		case '[':
			if err := flush(i); err != nil {
				return nil, err
			}
			if len(p) == 0 {
				return nil, fmt.Errorf("field path %q: an index needs a key before it", s)
			}
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("field path %q: unclosed [ at offset %d", s, i)
			}
			n, err := strconv.Atoi(s[i+1 : i+end])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("field path %q: index %q at offset %d is not a number", s, s[i+1:i+end], i)
			}
			p = append(p, Segment{Index: n, IsIndex: true})
			i += end
			if i+1 < len(s) && s[i+1] != '.' && s[i+1] != '[' {
				return nil, fmt.Errorf("field path %q: want . or [ after ] at offset %d", s, i)
			}
		case ']':
			return nil, fmt.Errorf("field path %q: ] without [ at offset %d", s, i)
		default:
			key.WriteByte(c)
			inKey = true
		}
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("empty field path")
	}
	return p, nil
}
