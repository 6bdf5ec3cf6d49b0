package katalogschema

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// obj is a JSON object that keeps its keys in insertion order, so that the schema reads in
// the order of the Katalog's fields rather than alphabetically.
type obj struct {
	keys []string
	vals map[string]any
}

// object builds an obj from key, value pairs.
func object(kv ...any) *obj {
	o := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *obj) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// merge copies src into o: objects merge recursively, "required" lists are united, and any
// other value replaces o's.
func (o *obj) merge(src *obj) {
	for _, k := range src.keys {
		v := src.vals[k]
		switch sv := v.(type) {
		case *obj:
			if dv, ok := o.vals[k].(*obj); ok {
				dv.merge(sv)
				continue
			}
		case []string:
			if dv, ok := o.vals[k].([]string); ok && k == "required" {
				for _, s := range sv {
					if !slices.Contains(dv, s) {
						dv = append(dv, s)
					}
				}
				o.set(k, dv)
				continue
			}
		}
		o.set(k, v)
	}
}

// MarshalJSON writes the keys in order.
func (o *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping (descriptions hold '<' and '>'), and with a
// decoded JSON object's keys sorted, as encoding/json does.
func marshal(v any) ([]byte, error) {
	if m, ok := v.(map[string]any); ok {
		o := object()
		for _, k := range slices.Sorted(maps.Keys(m)) {
			o.set(k, m[k])
		}
		return o.MarshalJSON()
	}
	if l, ok := v.([]any); ok {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range l {
			if i > 0 {
				b.WriteByte(',')
			}
			eb, err := marshal(e)
			if err != nil {
				return nil, err
			}
			b.Write(eb)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
