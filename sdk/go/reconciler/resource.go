package reconciler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Intent is the intent form of a resource: a type and its fields, from which ork builds the
// object (see the <Type>Fields types).
type Intent struct {
	Type IntentType `json:"type"`
	// Fields is one of the <Type>Fields structs, or map[string]any once decoded.
	Fields any `json:"fields"`
	// ForceConflict is server-side apply's force for this object; default (nil): the
	// Katalog's reconcile.forceConflict, else true.
	ForceConflict *bool `json:"forceConflict,omitzero"`
}

// Resource is one entry of Result.Resources: an Intent (the builders, Deployment(...)) or a
// full Kubernetes object (FullObject). Exactly one of the two is set.
type Resource struct {
	Intent *Intent
	Object map[string]any
}

// FullObject is an entry applied as the object obj is (apiVersion, kind, metadata.name and
// the rest); ork adds the namespace default, the ownerReference and its labels.
func FullObject(obj map[string]any) Resource { return Resource{Object: obj} }

// WithForceConflict sets an intent entry's forceConflict; a full object is returned as is.
func (r Resource) WithForceConflict(force bool) Resource {
	if r.Intent != nil {
		in := *r.Intent
		in.ForceConflict = &force
		r.Intent = &in
	}
	return r
}

// Validate reports an entry that is neither form, or an intent whose typed fields miss a
// required one.
func (r Resource) Validate() error {
	switch {
	case r.Intent != nil && r.Object != nil:
		return fmt.Errorf("a resource is an intent or a full object, not both")
	case r.Intent != nil:
		if v, ok := r.Intent.Fields.(interface{ Validate() error }); ok {
			return v.Validate()
		}
		if r.Intent.Type == "" {
			return fmt.Errorf("intent entry without a type")
		}
		return nil
	case r.Object != nil:
		md, _ := r.Object["metadata"].(map[string]any)
		if r.Object["apiVersion"] == nil || r.Object["kind"] == nil || md["name"] == nil {
			return fmt.Errorf("full object without apiVersion, kind or metadata.name")
		}
		return nil
	}
	return fmt.Errorf("empty resource: build one with an intent builder or FullObject")
}

// MarshalJSON writes the entry in its form.
func (r Resource) MarshalJSON() ([]byte, error) {
	if r.Intent != nil {
		return json.Marshal(r.Intent)
	}
	return json.Marshal(r.Object)
}

// UnmarshalJSON reads an entry as ork does: one with a fields key is an intent, any other a
// full object.
func (r *Resource) UnmarshalJSON(data []byte) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	*r = Resource{}
	if _, ok := probe["fields"]; ok {
		var in struct {
			Type          IntentType     `json:"type"`
			Fields        map[string]any `json:"fields"`
			ForceConflict *bool          `json:"forceConflict"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			return err
		}
		r.Intent = &Intent{Type: in.Type, Fields: in.Fields, ForceConflict: in.ForceConflict}
		return nil
	}
	return json.Unmarshal(data, &r.Object)
}

// IntOrString is a port: a number or a name. The zero value is absent.
type IntOrString struct {
	int   int64
	str   string
	isStr bool
	set   bool
}

// Int is the port number n.
func Int(n int64) IntOrString { return IntOrString{int: n, set: true} }

// Str is the port name s.
func Str(s string) IntOrString { return IntOrString{str: s, isStr: true, set: true} }

// IsZero reports an absent value.
func (v IntOrString) IsZero() bool { return !v.set }

// String is the number or the name.
func (v IntOrString) String() string {
	if v.isStr {
		return v.str
	}
	return strconv.FormatInt(v.int, 10)
}

// MarshalJSON writes a number or a string.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.isStr {
		return json.Marshal(v.str)
	}
	return json.Marshal(v.int)
}

// UnmarshalJSON reads a number or a string.
func (v *IntOrString) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		*v = IntOrString{}
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*v = Str(s)
		return nil
	}
	var n int64
	if err := json.Unmarshal(data, &n); err != nil {
		return err
	}
	*v = Int(n)
	return nil
}

// Ptr is a pointer to v, for the optional numbers and booleans of the fields types:
// Replicas: reconciler.Ptr[int64](3).
func Ptr[T any](v T) *T { return &v }
