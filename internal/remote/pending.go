package remote

import (
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/orkspace/ork/internal/operation"
)

// operationFields lists the fields of a result's operation for messages.
const operationFields = "id, pollAfter, deadline, message, progress"

// decodeOperation checks the operation of a "pending" result: an id, durations that are Go
// durations and not negative, a progress from 0 to 100. Its bounds (pollAfter at least 1s,
// 10s when absent) are the engine's to apply: the answer is kept as written.
func decodeOperation(raw map[string]any) (*operation.Answer, error) {
	var unknown []string
	for k := range raw {
		switch k {
		case "id", "pollAfter", "deadline", "message", "progress":
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, invalidJSON("unknown field \"operation.%s\" (an operation has %s)", unknown[0], operationFields)
	}
	a := &operation.Answer{}
	var err error
	var pollAfter, deadline string
	for _, f := range []struct {
		name string
		into *string
	}{{"id", &a.ID}, {"pollAfter", &pollAfter}, {"deadline", &deadline}, {"message", &a.Message}} {
		if *f.into, err = stringField(raw, f.name); err != nil {
			return nil, invalidJSON("field \"operation.%s\" is %s, want a string", f.name, jsonType(raw[f.name]))
		}
	}
	if a.ID == "" {
		return nil, callErr(KindInvalidResult, nil, "result \"pending\" with an operation without an id (an operation has %s)", operationFields)
	}
	if utf8.RuneCountInString(a.ID) > operation.MaxIDLength {
		return nil, callErr(KindInvalidResult, nil, "operation id %q is longer than %d characters", truncate(a.ID, 64), operation.MaxIDLength)
	}
	if a.PollAfter, err = operationDuration("pollAfter", pollAfter); err != nil {
		return nil, err
	}
	if a.Deadline, err = operationDuration("deadline", deadline); err != nil {
		return nil, err
	}
	if a.Progress, err = progressField(raw["progress"]); err != nil {
		return nil, err
	}
	return a, nil
}

func operationDuration(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, callErr(KindInvalidResult, err, "invalid operation.%s %q (want a Go duration such as 10s or 30m)", name, truncate(s, 64))
	}
	return d, nil
}

// progressField reads operation.progress: a whole number from 0 to 100 (100.0 counts, as in
// JSON Schema).
func progressField(v any) (*int, error) {
	var f float64
	switch n := v.(type) {
	case nil:
		return nil, nil
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		return nil, invalidJSON("field \"operation.progress\" is %s, want a number", jsonType(v))
	}
	if f != math.Trunc(f) || f < 0 || f > 100 {
		return nil, callErr(KindInvalidResult, nil, "invalid operation.progress %v (want a whole number from 0 to 100)", v)
	}
	p := int(f)
	return &p, nil
}

// pendingMessage describes a "pending" result for the Ready condition.
func pendingMessage(a *operation.Answer) string {
	s := fmt.Sprintf("operation %q pending", truncate(a.ID, 64))
	if a.Progress != nil {
		s += fmt.Sprintf(" (%d%%)", *a.Progress)
	}
	if a.Message != "" {
		s += ": " + truncate(a.Message, maxErrorText)
	}
	return s
}
