package resources

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orkspace/ork/internal/suggest"
)

// reader reads the fields of one entry, coercing "2" and "true" where a number or a boolean
// is expected. The first problem is kept in err and later reads return zero values, so a
// builder reads straight through and checks err once at the end.
type reader struct {
	typ string
	m   map[string]any
	err *FieldError
}

func (r *reader) fail(field, format string, a ...any) {
	if r.err == nil {
		r.err = &FieldError{Type: r.typ, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

// get returns a field's value; null (or a template that rendered to nothing) counts as absent.
func (r *reader) get(name string) (any, bool) {
	v, ok := r.m[name]
	return v, ok && v != nil
}

// check rejects fields outside known and reports the first missing required one. Unknown
// fields come first: "imagee" is better reported as a typo than as "image" missing.
func (r *reader) check(required, optional []string) {
	known := slices.Concat(required, optional)
	for _, k := range slices.Sorted(maps.Keys(r.m)) {
		if !slices.Contains(known, k) {
			r.unknown(k, k, known)
			return
		}
	}
	for _, k := range required {
		v, ok := r.get(k)
		if !ok {
			r.fail(k, "required")
			return
		}
		if s, isStr := v.(string); isStr && s == "" {
			r.fail(k, "required, got an empty string")
			return
		}
	}
}

// unknown reports key, at field, as not one of known, suggesting the nearest.
func (r *reader) unknown(field, key string, known []string) {
	sorted := slices.Sorted(slices.Values(known))
	if near := suggest.Nearest(key, sorted); near != "" {
		r.fail(field, "unknown field (did you mean %q?)", near)
	} else {
		r.fail(field, "unknown field (known fields: %s)", strings.Join(sorted, ", "))
	}
}

func (r *reader) str(name string) string {
	v, ok := r.get(name)
	if !ok || r.err != nil {
		return ""
	}
	s, ok := scalarString(v)
	if !ok {
		r.fail(name, "expected a string, got %s", describe(v))
	}
	return s
}

func (r *reader) int32(name string) *int32 {
	v, ok := r.get(name)
	if !ok || r.err != nil {
		return nil
	}
	i, ok := toInt(v)
	if !ok {
		r.fail(name, "expected an integer, got %s", describe(v))
		return nil
	}
	if i < math.MinInt32 || i > math.MaxInt32 {
		r.fail(name, "%d is out of range", i)
		return nil
	}
	n := int32(i)
	return &n
}

func (r *reader) bool(name string) *bool {
	v, ok := r.get(name)
	if !ok || r.err != nil {
		return nil
	}
	b, ok := toBool(v)
	if !ok {
		r.fail(name, "expected true or false, got %s", describe(v))
		return nil
	}
	return &b
}

// strings reads a list of strings; numbers and booleans in it are written out ("--port", 8080).
func (r *reader) strings(name string) []string {
	v, ok := r.get(name)
	if !ok || r.err != nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.fail(name, "expected a list of strings, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := scalarString(e)
		if !ok {
			r.fail(fmt.Sprintf("%s[%d]", name, i), "expected a string, got %s", describe(e))
			return nil
		}
		out = append(out, s)
	}
	return out
}

// stringMap reads a mapping of strings (labels, data, env); scalars are written out.
func (r *reader) stringMap(name string) map[string]string {
	m := r.mapping(name)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := scalarString(v)
		if !ok {
			r.fail(name+"."+k, "expected a string, got %s", describe(v))
			return nil
		}
		out[k] = s
	}
	return out
}

func (r *reader) mapping(name string) map[string]any {
	v, ok := r.get(name)
	if !ok || r.err != nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(name, "expected a mapping, got %s", describe(v))
		return nil
	}
	return m
}

// intOrString reads a port that is a number or a port name.
func (r *reader) intOrString(name string) *intstr.IntOrString {
	v, ok := r.get(name)
	if !ok || r.err != nil {
		return nil
	}
	if i, ok := toInt(v); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
		p := intstr.FromInt32(int32(i))
		return &p
	}
	if s, ok := v.(string); ok && s != "" {
		p := intstr.FromString(s)
		return &p
	}
	r.fail(name, "expected a port number or name, got %s", describe(v))
	return nil
}

func (r *reader) quantity(field string, v any) resource.Quantity {
	s, ok := scalarString(v)
	if !ok {
		r.fail(field, "expected a quantity such as \"500m\" or \"1Gi\", got %s", describe(v))
		return resource.Quantity{}
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		r.fail(field, "expected a quantity such as \"500m\" or \"1Gi\", got %q", s)
	}
	return q
}

// oneOf reads a string that must be one of allowed (empty when absent).
func (r *reader) oneOf(name string, allowed ...string) string {
	s := r.str(name)
	if s == "" || slices.Contains(allowed, s) {
		return s
	}
	r.fail(name, "%q is not one of %s", s, strings.Join(allowed, ", "))
	return ""
}

// scalarString writes out a string, number or boolean; templates render "8080" to a number,
// and a string field must still take it.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// toInt accepts whole numbers of any Go type JSON or YAML decoding yields, and strings that
// spell one.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x > math.MaxInt64 || x < math.MinInt64 {
			return 0, false
		}
		return int64(x), true
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}

func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	}
	return false, false
}

// describe names a value's type for error messages: `string "abc"`, `a list`.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	if s, ok := scalarString(v); ok {
		return "number " + s
	}
	return fmt.Sprintf("%T", v)
}
