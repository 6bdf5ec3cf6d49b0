// Package render evaluates Katalog templates (Go text/template over a custom resource as a
// map) with ork's documented function set, and coerces rendered strings to JSON types.
package render

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"text/template"
)

// Funcs is ork's documented template function set.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"default": func(def, v any) any {
			if empty(v) {
				return def
			}
			return v
		},
		"lower":   strings.ToLower,
		"upper":   strings.ToUpper,
		"trim":    strings.TrimSpace,
		"replace": func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"quote":   func(v any) string { return strconv.Quote(fmt.Sprint(v)) },
		"toJSON": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"b64enc": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec": func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			return string(b), err
		},
		"trunc": func(n int, s string) string {
			if n >= 0 && len(s) > n {
				return s[:n]
			}
			return s
		},
		"required": func(msg string, v any) (any, error) {
			if empty(v) {
				return nil, fmt.Errorf("%s", msg)
			}
			return v, nil
		},
	}
}

// FuncNames lists the documented functions, sorted, for docs and error hints.
func FuncNames() []string {
	return []string{"b64dec", "b64enc", "default", "lower", "quote", "replace", "required", "toJSON", "trim", "trunc", "upper"}
}

// IsTemplate reports whether s contains template actions.
func IsTemplate(s string) bool { return strings.Contains(s, "{{") }

// Parse parses text as a template. name locates it in errors, e.g. "katalog.yaml:12".
// A missing map key is an error rather than "<no value>": a typo must not render silently.
func Parse(name, text string) (*template.Template, error) {
	t, err := template.New(name).Funcs(Funcs()).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	return t, nil
}

// ParseOptional parses text for values that may be absent, such as remote args: a missing
// key renders as nothing rather than failing, so `{{ .spec.logLevel }}` on a CR without
// spec.logLevel is null and `{{ .spec.logLevel | default "info" }}` works. Use Optional on
// the rendered string.
func ParseOptional(name, text string) (*template.Template, error) {
	t, err := template.New(name).Funcs(Funcs()).Option("missingkey=default").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	return t, nil
}

// noValue is what text/template prints for a missing key under missingkey=default.
const noValue = "<no value>"

// Optional coerces the output of a ParseOptional template: a lone missing value is null,
// a missing value inside other text is empty.
func Optional(rendered string) any {
	if rendered == noValue {
		return nil
	}
	return Coerce(strings.ReplaceAll(rendered, noValue, ""))
}

// String renders text against data; text without actions is returned as is.
func String(name, text string, data map[string]any) (string, error) {
	return (*Cache)(nil).String(name, text, data)
}

// Value renders every template string inside v (maps and lists are walked) and coerces each
// rendered result with Coerce, so "{{ .spec.replicas }}" becomes the number 2. Strings that
// are not templates keep their type: a literal "8080" stays a string.
func Value(name string, v any, data map[string]any) (any, error) {
	return (*Cache)(nil).Value(name, v, data)
}

// Cache keeps parsed templates for reuse: a reconciler renders the same Katalog templates
// on every pass and should parse them once. Safe for concurrent use (parsed templates are
// safe to execute in parallel); the zero value is ready, and a nil *Cache parses every time.
type Cache struct{ parsed sync.Map }

type cacheKey struct{ name, text string }

func (c *Cache) parse(name, text string) (*template.Template, error) {
	if c == nil {
		return Parse(name, text)
	}
	k := cacheKey{name, text}
	if t, ok := c.parsed.Load(k); ok {
		return t.(*template.Template), nil
	}
	t, err := Parse(name, text)
	if err != nil {
		return nil, err
	}
	c.parsed.Store(k, t)
	return t, nil
}

// String is String with c's parsed templates.
func (c *Cache) String(name, text string, data map[string]any) (string, error) {
	if !IsTemplate(text) {
		return text, nil
	}
	t, err := c.parse(name, text)
	if err != nil {
		return "", err
	}
	out, err := Execute(t, data)
	if err != nil {
		return "", fmt.Errorf("render template: %w", err)
	}
	return out, nil
}

// Execute runs a template that Parse returned against data. A field the data lacks is a
// *MissingField, in words, rather than Go's "map has no entry for key"; other errors are
// text/template's own.
func Execute(t *template.Template, data map[string]any) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		if mf := missingField(err); mf != nil {
			return "", mf
		}
		return "", err
	}
	return b.String(), nil
}

// Value is Value with c's parsed templates.
func (c *Cache) Value(name string, v any, data map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		if !IsTemplate(x) {
			return x, nil
		}
		s, err := c.String(name, x, data)
		if err != nil {
			return nil, err
		}
		if s == noValue {
			return nil, nil // a field that is there but null: absent, never the text "<no value>"
		}
		if !strings.Contains(x, noValue) {
			// A null field inside other text renders as nothing, as in remote.args: a name
			// "web-<no value>" is nothing anyone wrote.
			s = strings.ReplaceAll(s, noValue, "")
		}
		return Coerce(s), nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := c.Value(name, e, data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := c.Value(name, e, data)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// Coerce turns a rendered string into the JSON type it spells: integers, floats, booleans
// and null; anything else stays a string.
func Coerce(s string) any {
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null", "<nil>":
		return nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	// ParseFloat also reads "nan" and "inf", which JSON cannot carry: a CR named inf is a name.
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpP_") && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return s
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int, int64, float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
