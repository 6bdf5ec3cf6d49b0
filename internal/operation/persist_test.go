package operation

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestEncodeIsCompactJSONThatDecodesBack(t *testing.T) {
	s := *held(nil)
	got := Encode(s)
	want := `{"id":"op-1","key":"uid-1/3/op-1","generation":3,"startedAt":"2026-05-01T12:00:00Z","polls":2,"pollAfter":"5s","deadline":"2026-05-01T13:00:00Z","message":"creating","progress":20}`
	if got != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
	back, err := Decode([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	minimal := State{ID: "x", Key: "u/1/x", Generation: 1, StartedAt: t0, PollAfter: Duration(DefaultPollAfter)}
	if got, want := Encode(minimal), `{"id":"x","key":"u/1/x","generation":1,"startedAt":"2026-05-01T12:00:00Z","polls":0,"pollAfter":"10s"}`; got != want {
		t.Errorf("Encode of a minimal state = %s, want %s", got, want)
	}
}

func TestDecodeRejectsWhatOrkNeverWrites(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"not JSON", `{`, "unexpected EOF"},
		{"no id", `{"key":"k","startedAt":"2026-05-01T12:00:00Z","pollAfter":"1s"}`, "no id"},
		{"id too long", `{"id":"` + strings.Repeat("x", MaxIDLength+1) + `","key":"k","startedAt":"2026-05-01T12:00:00Z"}`, "longer than 256 characters"},
		{"no key", `{"id":"x","startedAt":"2026-05-01T12:00:00Z"}`, "no key"},
		{"no start", `{"id":"x","key":"k"}`, "no startedAt"},
		{"negative generation", `{"id":"x","key":"k","generation":-1,"startedAt":"2026-05-01T12:00:00Z"}`, "generation -1"},
		{"negative polls", `{"id":"x","key":"k","polls":-1,"startedAt":"2026-05-01T12:00:00Z"}`, "polls -1"},
		{"pollAfter not a duration", `{"id":"x","key":"k","startedAt":"2026-05-01T12:00:00Z","pollAfter":"soon"}`, "pollAfter"},
		{"negative pollAfter", `{"id":"x","key":"k","startedAt":"2026-05-01T12:00:00Z","pollAfter":"-1s"}`, "negative"},
		{"progress over 100", `{"id":"x","key":"k","startedAt":"2026-05-01T12:00:00Z","progress":101}`, "progress 101"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	s := *held(nil)
	withStatus := func(v any) map[string]any {
		return map[string]any{"status": map[string]any{"phase": "x", StatusField: v}}
	}
	withAnnotation := func(v string) map[string]any {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{Annotation: v}}}
	}
	// As the apiserver gives it: integers are int64.
	fromServer := StatusValue(s)
	fromServer["generation"], fromServer["polls"], fromServer["progress"] = int64(3), int64(2), int64(20)
	both := withStatus(fromServer)
	both["metadata"] = withAnnotation(Encode(State{ID: "other", Key: "k", StartedAt: t0}))["metadata"]
	tests := []struct {
		name      string
		obj       map[string]any
		want      *State
		wantWhere Where
		wantErr   string
	}{
		{"nothing persisted", map[string]any{"status": map[string]any{"phase": "x"}}, nil, InStatus, ""},
		{"status.operation", withStatus(fromServer), &s, InStatus, ""},
		{"a null status.operation is none", withStatus(nil), nil, InStatus, ""},
		{"the annotation", withAnnotation(Encode(s)), &s, InAnnotation, ""},
		{"status wins over the annotation", both, &s, InStatus, ""},
		{"a broken annotation", withAnnotation(`{"id":""}`), nil, InAnnotation, "annotation orkestra.orkspace.io/operation: decode operation: no id"},
		{"a broken status.operation", withStatus("op-1"), nil, InStatus, "status.operation: decode operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, where, err := Read(tt.obj)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if where != tt.wantWhere {
				t.Errorf("where = %s, want %s", where, tt.wantWhere)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("state (-want +got):\n%s", d)
			}
		})
	}
}

func TestPatch(t *testing.T) {
	s := held(nil)
	tests := []struct {
		name  string
		where Where
		s     *State
		want  string
	}{
		{"status", InStatus, s, `{"status":{"operation":` + Encode(*s) + `}}`},
		{"clear status", InStatus, nil, `{"status":{"operation":null}}`},
		{"annotation", InAnnotation, s, `{"metadata":{"annotations":{"orkestra.orkspace.io/operation":` + quote(t, Encode(*s)) + `}}}`},
		{"clear annotation", InAnnotation, nil, `{"metadata":{"annotations":{"orkestra.orkspace.io/operation":null}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(Patch(tt.where, tt.s))
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("patch (-want +got):\n%s", d)
			}
		})
	}
}

func quote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// StatusKeeps checks the fields a declared status.operation must have: they are the
// persisted State's, every one.
func TestStateFieldsAreTheJSONOfAState(t *testing.T) {
	full := *held(func(s *State) { s.TimedOut = true })
	var m map[string]any
	if err := json.Unmarshal([]byte(Encode(full)), &m); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(slices.Sorted(maps.Keys(m)), slices.Sorted(slices.Values(stateFields()))); d != "" {
		t.Errorf("stateFields (-json +list):\n%s", d)
	}
}

func TestStatusKeeps(t *testing.T) {
	yes := true
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	preserve := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}
	everyField := map[string]apiextensionsv1.JSONSchemaProps{}
	for _, f := range stateFields() {
		everyField[f] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	}
	someFields := map[string]apiextensionsv1.JSONSchemaProps{"id": {Type: "string"}, "key": {Type: "string"}}
	root := func(status *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		r := obj(map[string]apiextensionsv1.JSONSchemaProps{"spec": preserve})
		if status != nil {
			r.Properties["status"] = *status
		}
		return &r
	}
	ptr := func(s apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps { return &s }
	statusWith := func(op apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		return ptr(obj(map[string]apiextensionsv1.JSONSchemaProps{"phase": {Type: "string"}, "operation": op}))
	}
	tests := []struct {
		name        string
		schema      *apiextensionsv1.JSONSchemaProps
		want        bool
		wantMissing []string
	}{
		{"no schema", nil, true, nil},
		{"status preserves unknown fields", root(&preserve), true, nil},
		{"status declares phase only", root(ptr(obj(map[string]apiextensionsv1.JSONSchemaProps{"phase": {Type: "string"}}))), false, nil},
		{"no status in the schema", root(nil), false, nil},
		{"no status, the root preserves unknown fields", &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}, true, nil},
		{"operation preserves unknown fields", root(statusWith(preserve)), true, nil},
		{"operation declares every field", root(statusWith(obj(everyField))), true, nil},
		{"operation declares some fields", root(statusWith(obj(someFields))), false,
			[]string{"generation", "startedAt", "polls", "pollAfter", "deadline", "message", "progress", "timedOut"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := StatusKeeps(tt.schema)
			if got != tt.want {
				t.Errorf("StatusKeeps = %v, want %v", got, tt.want)
			}
			if d := cmp.Diff(tt.wantMissing, missing); d != "" {
				t.Errorf("missing (-want +got):\n%s", d)
			}
		})
	}
}
