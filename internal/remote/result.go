package remote

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	sigsjson "sigs.k8s.io/json"
)

// Result values of a RemoteReconcileResult.
const (
	ResultOK      = "ok"
	ResultRequeue = "requeue"
	ResultError   = "error"
	// ResultPending: the reconciler started (or goes on with) a long-running operation,
	// described by the result's operation; ork holds it and polls.
	ResultPending = "pending"
)

// resultFields lists the fields of a RemoteReconcileResult for messages.
const resultFields = "result, requeueAfter, error, status, resources, operation"

func isResultField(k string) bool {
	switch k {
	case "result", "requeueAfter", "error", "status", "resources", "operation":
		return true
	}
	return false
}

// decodeResult decodes a RemoteReconcileResult strictly: one JSON object, field names
// matched exactly (encoding/json would accept "Result"), no unknown or duplicate field,
// nothing after the object. Integers decode as int64, as in objects from the apiserver.
func decodeResult(data []byte) (*Result, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, invalidJSON("empty body, want a JSON RemoteReconcileResult")
	}
	if trimmed[0] != '{' {
		return nil, invalidJSON("body is not a JSON object")
	}
	var raw map[string]any
	strictErrs, err := sigsjson.UnmarshalStrict(data, &raw, sigsjson.DisallowDuplicateFields)
	if err != nil {
		if ok, off := sigsjson.SyntaxErrorOffset(err); ok {
			return nil, invalidJSON("invalid JSON at byte %d: %v", off, err)
		}
		return nil, invalidJSON("%v", err)
	}
	if len(strictErrs) > 0 {
		return nil, invalidJSON("%v", strictErrs[0])
	}
	var unknown []string
	for k := range raw {
		if !isResultField(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, invalidJSON("unknown field %q (a RemoteReconcileResult has %s)", unknown[0], resultFields)
	}

	res := &Result{}
	var requeueAfter string
	if res.Result, err = stringField(raw, "result"); err != nil {
		return nil, err
	}
	if requeueAfter, err = stringField(raw, "requeueAfter"); err != nil {
		return nil, err
	}
	if res.Error, err = stringField(raw, "error"); err != nil {
		return nil, err
	}
	if res.Status, err = objectField(raw, "status"); err != nil {
		return nil, err
	}
	if res.Resources, err = resourcesField(raw); err != nil {
		return nil, err
	}
	op, err := objectField(raw, "operation")
	if err != nil {
		return nil, err
	}

	switch res.Result {
	case "", ResultOK, ResultRequeue:
	case ResultPending:
		if op == nil {
			return nil, callErr(KindInvalidResult, nil, "result \"pending\" without an operation (want \"operation\": {\"id\": ...})")
		}
		if res.Operation, err = decodeOperation(op); err != nil {
			return nil, err
		}
	case ResultError:
		return res, callErr(KindErrorResult, nil, "%s", errorResultMessage(res.Error))
	default:
		return nil, callErr(KindUnknownResult, nil, "unknown result %q (want \"ok\", \"requeue\", \"pending\" or \"error\")", truncate(res.Result, 64))
	}
	if op != nil && res.Result != ResultPending {
		return nil, callErr(KindInvalidResult, nil, "operation with result %q: an operation goes only with result \"pending\"", res.Result)
	}
	if requeueAfter != "" {
		d, err := time.ParseDuration(requeueAfter)
		if err != nil || d < 0 {
			return nil, callErr(KindInvalidResult, err, "invalid requeueAfter %q (want a Go duration such as 30s or 500ms)", truncate(requeueAfter, 64))
		}
		res.RequeueAfter = d
	}
	return res, nil
}

func invalidJSON(format string, args ...any) *CallError {
	return callErr(KindInvalidJSON, nil, "invalid RemoteReconcileResult: "+format, args...)
}

func stringField(raw map[string]any, name string) (string, error) {
	switch v := raw[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", invalidJSON("field %q is %s, want a string", name, jsonType(v))
	}
}

func objectField(raw map[string]any, name string) (map[string]any, error) {
	switch v := raw[name].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, invalidJSON("field %q is %s, want an object", name, jsonType(v))
	}
}

func resourcesField(raw map[string]any) ([]map[string]any, error) {
	switch v := raw["resources"].(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, invalidJSON("resources[%d] is %s, want an object", i, jsonType(e))
			}
			out[i] = m
		}
		return out, nil
	default:
		return nil, invalidJSON("field \"resources\" is %s, want an array", jsonType(v))
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a number"
}

// errorResultMessage describes an "error" result. The caller scrubs secrets from text
// first: a cut made before the scrub could leave part of a token behind.
func errorResultMessage(text string) string {
	if text == "" {
		return "reconciler returned result \"error\" without error text"
	}
	return "reconciler returned error: " + truncate(text, maxErrorText)
}

// String describes the result for messages: "ok", "requeue after 5s", "pending (operation
// "db-1")".
func (r *Result) String() string {
	s := r.Result
	if s == "" {
		s = ResultOK
	}
	if r.Operation != nil {
		s += fmt.Sprintf(" (operation %q)", truncate(r.Operation.ID, 64))
	}
	if r.RequeueAfter > 0 {
		s += fmt.Sprintf(" (requeue after %s)", r.RequeueAfter)
	}
	return s
}
