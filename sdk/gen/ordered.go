package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// object is a JSON object that keeps its keys in document order, so that the generated
// types list their fields as the schema does (required ones first), not alphabetically.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) any { return o.vals[k] }

func (o *object) obj(k string) *object {
	v, _ := o.vals[k].(*object)
	return v
}

func (o *object) str(k string) string {
	v, _ := o.vals[k].(string)
	return v
}

// strings is a list of strings at k (enum, required), null entries left out.
func (o *object) strings(k string) []string {
	l, _ := o.vals[k].([]any)
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// decodeOrdered decodes one JSON document: objects as *object, arrays as []any.
func decodeOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("data after the JSON document")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string) // the decoder guarantees a string key inside an object
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k)
				o.vals[k] = v
			}
			_, err := d.Token() // '}'
			return o, err
		case '[':
			l := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := d.Token() // ']'
			return l, err
		}
	}
	return tok, nil
}
