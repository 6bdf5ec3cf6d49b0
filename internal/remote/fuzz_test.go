package remote

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sigsjson "sigs.k8s.io/json"
)

// sameJSON compares decoded PreparedRequests and results after numbers(): an empty
// conflictingManagers is omitted on the wire (empty and absent both mean none), and a
// number is its value.
var sameJSON = cmp.Options{
	cmp.FilterValues(func(x, y []string) bool { return len(x) == 0 && len(y) == 0 },
		cmp.Comparer(func(_, _ []string) bool { return true })),
	cmp.Comparer(func(a, b number) bool {
		if a.isInt && b.isInt {
			return a.i == b.i
		}
		return a.float() == b.float()
	}),
}

// number is a JSON number as a decoder gave it: an int64 or a float64. Two numbers are the
// same when both are integers and equal, or else when they are the same double: JSON's
// numbers are doubles to most readers, and Go writes a float64 in the shortest form that
// reads back as the same double (1.0 as 1, 1.8446744073709552e16 as 18446744073709550).
type number struct {
	i     int64
	f     float64
	isInt bool
}

func (n number) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

// numbers returns v with every number as a number, and every string as JSON carries it:
// each byte that is not UTF-8 as U+FFFD (JSON strings are Unicode; b64dec can make such bytes).
func numbers(v any) any {
	switch x := v.(type) {
	case float64:
		return number{f: x}
	case int64:
		return number{i: x, isInt: true}
	case string:
		return jsonString(x)
	case map[string]any:
		if x == nil {
			return x // nil and {} differ: status absent, or present and empty
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[jsonString(k)] = numbers(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbers(e)
		}
		return out
	}
	return v
}

// jsonString is s as encoding/json writes it: each byte that is not UTF-8 as U+FFFD.
func jsonString(s string) string { return strings.Map(func(r rune) rune { return r }, s) }

// requestNumbers is numbers over the JSON values of a PreparedRequest.
func requestNumbers(r preparedRequest) preparedRequest {
	r.Object, _ = numbers(r.Object).(map[string]any)
	r.Args = numbers(r.Args)
	if r.Prepared.Children != nil {
		children := make(map[string]map[string]map[string]any, len(r.Prepared.Children))
		for typ, byName := range r.Prepared.Children {
			m := make(map[string]map[string]any, len(byName))
			for name, obj := range byName {
				m[name], _ = numbers(obj).(map[string]any)
			}
			children[typ] = m
		}
		r.Prepared.Children = children
	}
	return r
}

// decodeRequest reads a PreparedRequest as a reconciler written in Go would, numbers as the
// apiserver decodes them (int64 for integers).
func decodeRequest(data []byte) (preparedRequest, error) {
	var req preparedRequest
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &req)
	return req, err
}

// FuzzPreparedRequestRoundTrip: decode → encode (encodeRequest, what buildBody sends) →
// decode gives the same PreparedRequest, and encoding that again gives the same bytes.
//
//	go test ./internal/remote -run '^$' -fuzz FuzzPreparedRequestRoundTrip -fuzztime 5m
func FuzzPreparedRequestRoundTrip(f *testing.F) {
	golden, err := os.ReadFile("testdata/request.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	for _, s := range []string{
		`{}`, `{"key":"a/b","object":null,"args":{}}`,
		`{"object":{"spec":{"f":1.0,"big":1e300,"i":-9223372036854775808,"u":18446744073709551615,"s":"<&>\u2028"}}}`,
		`{"prepared":{"children":{},"lastApply":[]}}`, `{"prepared":{"children":null,"lastApply":null,"dryRun":true}}`,
		`{"prepared":{"operation":{"id":"x","key":"u/1/x","startedAt":"2026-05-01T12:00:00Z","polls":2,"superseded":true,"timedOut":false,"generation":1,"callback":{"url":"u","token":"t"}}}}`,
		`{"prepared":{"lastApply":[{"name":"x","outcome":"failed","conflictingManagers":[]}]}}`,
		`{"gvk":{"Group":"g","Version":"v1","Kind":"K"},"args":[1,"two",null,{"3":[]}]}`,
		`{"key":"\ud800\udc00\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		first, err := decodeRequest(data)
		if err != nil {
			return // not a PreparedRequest: nothing ork would send
		}
		body, err := encodeRequest(first)
		if err != nil {
			t.Fatalf("encode %+v: %v", first, err)
		}
		second, err := decodeRequest(body)
		if err != nil {
			t.Fatalf("ork's own request does not decode: %v\n%s", err, body)
		}
		if d := cmp.Diff(requestNumbers(first), requestNumbers(second), sameJSON); d != "" {
			t.Fatalf("decode → encode → decode changed the request (-first +second):\n%s\nbody: %s", d, body)
		}
		again, err := encodeRequest(second)
		if err != nil || string(again) != string(body) {
			t.Fatalf("encoding the decoded request again gives other bytes (%v):\n%s\n%s", err, body, again)
		}
	})
}

func resourceNumbers(rs []map[string]any) []map[string]any {
	if rs == nil {
		return nil
	}
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		out[i], _ = numbers(r).(map[string]any)
	}
	return out
}

// encodeResult writes res as a reconciler would answer it, each field only when set.
func encodeResult(res *Result) ([]byte, error) {
	out := map[string]any{}
	if res.Result != "" {
		out["result"] = res.Result
	}
	if res.RequeueAfter > 0 {
		out["requeueAfter"] = res.RequeueAfter.String()
	}
	if res.Error != "" {
		out["error"] = res.Error
	}
	if res.Status != nil {
		out["status"] = res.Status
	}
	if res.Resources != nil {
		out["resources"] = res.Resources
	}
	if op := res.Operation; op != nil {
		o := map[string]any{"id": op.ID}
		if op.PollAfter > 0 {
			o["pollAfter"] = op.PollAfter.String()
		}
		if op.Deadline > 0 {
			o["deadline"] = op.Deadline.String()
		}
		if op.Message != "" {
			o["message"] = op.Message
		}
		if op.Progress != nil {
			o["progress"] = *op.Progress
		}
		out["operation"] = o
	}
	return json.Marshal(out)
}

// FuzzDecodeResult: any body is a RemoteReconcileResult or a CallError that says what is
// wrong with it, never a panic; and a body that decodes round-trips: decode → encode →
// decode gives the same result (and the same error, for an "error" result).
//
//	go test ./internal/remote -run '^$' -fuzz FuzzDecodeResult -fuzztime 5m
func FuzzDecodeResult(f *testing.F) {
	for _, s := range []string{
		`{"result":"ok","status":{"phase":"Ready"},"resources":[{"type":"deployment","fields":{"name":"a","image":"b"}}]}`,
		`{"result":"requeue","requeueAfter":"30s"}`, `{"result":"error","error":"x"}`, `{}`, `[]`, `{"result":1}`,
		`{"result":"ok","result":"ok"}`, `{"Result":"ok"}`, `{"result":"ok"} x`, ``, `null`, `{"resources":{}}`,
		`{"requeueAfter":"1h0m0.5s","status":{"n":1.0,"e":1e-7},"resources":[]}`, `{"result":"","requeueAfter":"0s","status":null}`,
		`{"result":"pending","operation":{"id":"db-1","pollAfter":"1m0.5s","deadline":"30m","message":"m","progress":40}}`,
		`{"result":"pending","operation":{"id":"x","progress":1e2}}`, `{"result":"pending"}`, `{"result":"ok","operation":{"id":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := decodeResult(body)
		var ce *CallError
		switch {
		case err != nil && (!errors.As(err, &ce) || ce.Message == ""):
			t.Fatalf("decodeResult(%q): %v, want a CallError with a message", body, err)
		case err == nil && (res == nil || res.RequeueAfter < 0):
			t.Fatalf("decodeResult(%q) = %+v without error", body, res)
		case res == nil:
			return // refused: nothing to round-trip
		}
		again, err2 := encodeResult(res)
		if err2 != nil {
			t.Fatalf("encode %+v: %v", res, err2)
		}
		res2, err3 := decodeResult(again)
		if res2 != nil {
			res2.Status, _ = numbers(res2.Status).(map[string]any)
			res2.Resources = resourceNumbers(res2.Resources)
		}
		res.Status, _ = numbers(res.Status).(map[string]any)
		res.Resources = resourceNumbers(res.Resources)
		if d := cmp.Diff(res, res2, sameJSON); d != "" {
			t.Fatalf("decode → encode → decode changed the result of %q (-first +second):\n%s", body, d)
		}
		if (err == nil) != (err3 == nil) || err != nil && err.Error() != err3.Error() {
			t.Fatalf("decode → encode → decode changed the error of %q: %v, then %v", body, err, err3)
		}
	})
}

// FuzzParseRetryAfter: any header value is a delay of zero or more.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"2", "0", "-1", "99999999999999999999", "Wed, 21 Oct 2026 07:28:00 GMT", "soon", " 7 "} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 {
			t.Errorf("parseRetryAfter(%q) = %v, want >= 0", v, d)
		}
	})
}

// FuzzCompileArgs runs remote.args the way production does (compileArgs once, the compiled
// templates executed per call), with one arbitrary template in three places: compiling
// fails with an error naming the arg (remote.args.a, the first in key order) or succeeds;
// a call renders every arg or returns an error naming the failing one and no value at all,
// never a partial object; the same template renders alike wherever it stands and on every
// call; and the args survive the PreparedRequest's encoding.
//
//	go test ./internal/remote -run '^$' -fuzz FuzzCompileArgs -fuzztime 5m
func FuzzCompileArgs(f *testing.F) {
	for _, s := range []string{
		`{{ .metadata.name }}`, `{{ .spec.replicas }}`, `{{ .spec.missing }}`, `{{ .spec.missing | default "info" }}`,
		`level-{{ .spec.missing }}`, `{{ required "need x" .spec.missing }}`, `{{ .spec.x | b64dec }}`, `{{ toJSON .spec }}`,
		`{{ index .spec "list" }}`, `{{ .metadata.name.deeper }}`, `{{`, `{{ nope }}`, `8080`, `{{ "1e400" }}`, `{{ "null" }}`,
	} {
		f.Add(s)
	}
	cr := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(2), "x": "abc", "list": []any{"a", int64(1)}},
	}
	f.Fuzz(func(t *testing.T, text string) {
		args := map[string]any{"a": text, "b": []any{text, int64(7)}, "c": map[string]any{"d": text}}
		fn, err := compileArgs("remote.args", args)
		if err != nil {
			if fn != nil || !strings.HasPrefix(err.Error(), "remote.args.a: ") {
				t.Fatalf("compile %q: %v (func %v), want an error naming remote.args.a and no func", text, err, fn != nil)
			}
			return
		}
		got, err := fn(cr)
		if err != nil {
			if got != nil || !strings.HasPrefix(err.Error(), "render remote.args.a: ") {
				t.Fatalf("render %q = %#v, %v; want no value and an error naming remote.args.a", text, got, err)
			}
			return
		}
		m, ok := got.(map[string]any)
		if !ok || len(m) != 3 {
			t.Fatalf("render %q = %#v, want the three args", text, got)
		}
		b, _ := m["b"].([]any)
		c, _ := m["c"].(map[string]any)
		if len(b) != 2 || !cmp.Equal(b[0], m["a"]) || b[1] != int64(7) || !cmp.Equal(c["d"], m["a"]) {
			t.Fatalf("render %q = %#v: one template rendered differently in different places", text, got)
		}
		if again, err := fn(cr); err != nil || !cmp.Equal(again, got) {
			t.Fatalf("a second call of %q gave %#v, %v; the first %#v", text, again, err, got)
		}
		body, err := encodeRequest(preparedRequest{Args: got})
		if err != nil {
			t.Fatalf("args %#v do not encode: %v", got, err)
		}
		back, err := decodeRequest(body)
		if err != nil || !cmp.Equal(numbers(got), numbers(back.Args), sameJSON) {
			t.Fatalf("args %#v came back as %#v (%v)", got, back.Args, err)
		}
	})
}
