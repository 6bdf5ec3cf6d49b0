package operation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Where says where the operation of a custom resource is persisted.
type Where int

// Places of the operation.
const (
	// InStatus: status.operation, written with the status subresource; the CRD's status
	// schema keeps it (see StatusKeeps).
	InStatus Where = iota
	// InAnnotation: the Annotation, as compact JSON, where the status schema would prune
	// status.operation.
	InAnnotation
)

// String names the place as users see it.
func (w Where) String() string {
	if w == InAnnotation {
		return "annotation " + Annotation
	}
	return "status." + StatusField
}

// Encode is the compact JSON of s, the Annotation's value.
func Encode(s State) string {
	b, err := json.Marshal(s)
	if err != nil {
		// A State holds only strings, numbers, times and booleans.
		panic(fmt.Sprintf("encode operation: %v", err))
	}
	return string(b)
}

// Decode reads an operation from its JSON (the Annotation's value, or status.operation
// marshalled) and checks it: a hand-edited value must not make ork poll nonsense.
func Decode(data []byte) (State, error) {
	var s State
	// Unknown fields are ignored: during a rolling upgrade an older replica reads what a
	// newer one wrote, and must go on polling the same operation rather than drop it.
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return State{}, fmt.Errorf("decode operation: %w", err)
	}
	if err := s.check(); err != nil {
		return State{}, fmt.Errorf("decode operation: %w", err)
	}
	return s, nil
}

func (s State) check() error {
	switch {
	case s.ID == "":
		return errors.New("no id")
	case utf8.RuneCountInString(s.ID) > MaxIDLength:
		return fmt.Errorf("id is longer than %d characters", MaxIDLength)
	case s.Key == "":
		return errors.New("no key")
	case s.Generation < 0:
		return fmt.Errorf("generation %d is negative", s.Generation)
	case s.StartedAt.IsZero():
		return errors.New("no startedAt")
	case s.Polls < 0:
		return fmt.Errorf("polls %d is negative", s.Polls)
	case s.Progress != nil && (*s.Progress < 0 || *s.Progress > 100):
		return fmt.Errorf("progress %d is not between 0 and 100", *s.Progress)
	}
	return nil
}

// StatusValue is s as the value of status.operation in a merge patch.
func StatusValue(s State) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(Encode(s)), &m); err != nil {
		panic(fmt.Sprintf("encode operation: %v", err))
	}
	return m
}

// Read finds the operation persisted on a custom resource (an unstructured object):
// status.operation first, else the Annotation. It returns nil when there is none, and an
// error, naming where, when one is there but does not decode. The Where it returns is where
// it found one; where to write a new one is the CRD's to say (StatusKeeps), not Read's.
func Read(obj map[string]any) (*State, Where, error) {
	if status, ok := obj["status"].(map[string]any); ok {
		if v, ok := status[StatusField]; ok && v != nil {
			b, err := json.Marshal(v)
			if err == nil {
				var s State
				if s, err = Decode(b); err == nil {
					return &s, InStatus, nil
				}
			}
			return nil, InStatus, fmt.Errorf("%s: %w", InStatus, err)
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	v, ok := annotations[Annotation].(string)
	if !ok || v == "" {
		return nil, InStatus, nil
	}
	s, err := Decode([]byte(v))
	if err != nil {
		return nil, InAnnotation, fmt.Errorf("%s: %w", InAnnotation, err)
	}
	return &s, InAnnotation, nil
}

// Patch is the JSON merge patch that persists s at w, or removes the operation there when
// s is nil. A status patch goes to the status subresource, an annotation patch to the
// object itself.
func Patch(w Where, s *State) map[string]any {
	if w == InAnnotation {
		var v any // nil removes the annotation
		if s != nil {
			v = Encode(*s)
		}
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{Annotation: v}}}
	}
	var v any
	if s != nil {
		v = StatusValue(*s)
	}
	return map[string]any{"status": map[string]any{StatusField: v}}
}
