package wireschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/ork/schema"
)

func newValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The request goldens of internal/remote are bodies ork's request builder really
// produced; every *.json file there is one.
func TestGoldenRequestsMatchTheRequestSchema(t *testing.T) {
	v := newValidator(t)
	files, err := filepath.Glob(filepath.Join("..", "remote", "testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden request bodies found in internal/remote/testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.ValidatePreparedRequest(body); err != nil {
				t.Error(err)
			}
		})
	}
}

const validRequest = `{"key":"default/my-webapp","gvk":{"Group":"myorg.io","Version":"v1","Kind":"WebApp"},
"object":{"apiVersion":"myorg.io/v1","kind":"WebApp","metadata":{"name":"my-webapp"}},"args":{},
"prepared":{"trigger":"create","attempt":1,"generation":1,"deleting":false}}`

// editRequest returns validRequest changed by edit, so each case states only its difference.
func editRequest(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(validRequest), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRequestSchemaRejectsWhatOrkNeverSends(t *testing.T) {
	v := newValidator(t)
	prepared := func(m map[string]any) map[string]any { return m["prepared"].(map[string]any) }
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string // in the error
	}{
		{"missing gvk", func(m map[string]any) { delete(m, "gvk") }, "gvk"},
		{"lowercase gvk keys", func(m map[string]any) {
			m["gvk"] = map[string]any{"group": "myorg.io", "version": "v1", "kind": "WebApp"}
		}, "/gvk"},
		{"gvk without Kind", func(m map[string]any) { delete(m["gvk"].(map[string]any), "Kind") }, "Kind"},
		{"unknown top-level field", func(m map[string]any) { m["children"] = map[string]any{} }, "children"},
		{"key with two slashes", func(m map[string]any) { m["key"] = "a/b/c" }, "/key"},
		{"args as a list", func(m map[string]any) { m["args"] = []any{"x"} }, "/args"},
		{"object as a string", func(m map[string]any) { m["object"] = "{}" }, "/object"},
		{"unknown trigger", func(m map[string]any) { prepared(m)["trigger"] = "watch" }, "/prepared/trigger"},
		{"trigger outside the protocol's five", func(m map[string]any) { prepared(m)["trigger"] = "child" }, "/prepared/trigger"},
		{"attempt 0", func(m map[string]any) { prepared(m)["attempt"] = 0 }, "/prepared/attempt"},
		{"generation not an integer", func(m map[string]any) { prepared(m)["generation"] = 1.5 }, "/prepared/generation"},
		{"deleting as a string", func(m map[string]any) { prepared(m)["deleting"] = "false" }, "/prepared/deleting"},
		{"missing deleting", func(m map[string]any) { delete(prepared(m), "deleting") }, "deleting"},
		{"children not keyed by type then name", func(m map[string]any) {
			prepared(m)["children"] = map[string]any{"deployment": []any{}}
		}, "/prepared/children/deployment"},
		{"related not a list per key", func(m map[string]any) {
			prepared(m)["related"] = map[string]any{"config": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}}}
		}, "/prepared/related/config"},
		{"operation without a key", func(m map[string]any) {
			op := validOperation()
			delete(op, "key")
			prepared(m)["operation"] = op
		}, "key"},
		{"operation with an unknown field", func(m map[string]any) {
			op := validOperation()
			op["eta"] = "5m"
			prepared(m)["operation"] = op
		}, "/prepared/operation"},
		{"operation polls negative", func(m map[string]any) {
			op := validOperation()
			op["polls"] = -1
			prepared(m)["operation"] = op
		}, "/prepared/operation/polls"},
		{"operation callback without a token", func(m map[string]any) {
			op := validOperation()
			op["callback"] = map[string]any{"url": "https://ork.example/operations/x"}
			prepared(m)["operation"] = op
		}, "token"},
		{"related object without kind", func(m map[string]any) {
			prepared(m)["related"] = map[string]any{"config": []any{map[string]any{"apiVersion": "v1", "metadata": map[string]any{}}}}
		}, "/prepared/related/config/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidatePreparedRequest([]byte(editRequest(t, tt.edit)))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not mention %q:\n%v", tt.want, err)
			}
		})
	}
}

func TestRequestSchemaAcceptsEveryTriggerAndChildren(t *testing.T) {
	v := newValidator(t)
	for _, trigger := range []string{"create", "update", "delete", "resync", "requeue"} {
		body := editRequest(t, func(m map[string]any) {
			p := m["prepared"].(map[string]any)
			p["trigger"] = trigger
			p["children"] = map[string]any{"deployment": map[string]any{}, "widgets.myorg.io": map[string]any{
				"w1": map[string]any{"apiVersion": "myorg.io/v1", "kind": "Widget"}}}
		})
		if err := v.ValidatePreparedRequest([]byte(body)); err != nil {
			t.Errorf("trigger %s: %v", trigger, err)
		}
	}
	related := editRequest(t, func(m map[string]any) {
		m["prepared"].(map[string]any)["related"] = map[string]any{"pods": []any{}, "config": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "v"}}}}
	})
	if err := v.ValidatePreparedRequest([]byte(related)); err != nil {
		t.Errorf("prepared.related: %v", err)
	}
	// An exclude path may remove anything from the object, even metadata.
	if err := v.ValidatePreparedRequest([]byte(editRequest(t, func(m map[string]any) { m["object"] = map[string]any{} }))); err != nil {
		t.Errorf("object with everything excluded: %v", err)
	}
}

// validOperation is a prepared.operation as ork sends it about a held operation.
func validOperation() map[string]any {
	return map[string]any{"id": "db-1", "key": "0b5e-uid/1/db-1", "startedAt": "2026-05-01T12:00:00Z",
		"polls": 0, "superseded": false, "timedOut": false, "generation": 1}
}

func TestRequestSchemaAcceptsAHeldOperation(t *testing.T) {
	v := newValidator(t)
	for name, edit := range map[string]func(op map[string]any){
		"held":      func(map[string]any) {},
		"timed out": func(op map[string]any) { op["timedOut"] = true },
		"with a callback": func(op map[string]any) {
			op["callback"] = map[string]any{"url": "https://ork.example/operations/x", "token": "t"}
		},
	} {
		body := editRequest(t, func(m map[string]any) {
			op := validOperation()
			edit(op)
			m["prepared"].(map[string]any)["operation"] = op
		})
		if err := v.ValidatePreparedRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestValidatorRejectsBodiesThatAreNotOneJSONObject(t *testing.T) {
	v := newValidator(t)
	for _, body := range []string{``, `{`, `[]`, `"ok"`, `{"result":"ok"} {}`, `{"result":"ok","result":"error"}`} {
		if err := v.ValidateResult([]byte(body)); err == nil {
			t.Errorf("ValidateResult(%q) accepted", body)
		}
	}
	if err := v.ValidatePreparedRequest([]byte(validRequest + ` x`)); err == nil {
		t.Error("ValidatePreparedRequest accepted trailing data")
	}
}

// Every example in the schemas is something a reader may copy: each must validate.
func TestSchemaExamplesAreValid(t *testing.T) {
	v := newValidator(t)
	req := decodeSchema(t, schema.PreparedRequest())
	for i, ex := range req["examples"].([]any) {
		if err := v.ValidatePreparedRequest(marshal(t, ex)); err != nil {
			t.Errorf("request example %d: %v", i, err)
		}
	}
	res := decodeSchema(t, schema.RemoteReconcileResult())
	for i, ex := range res["examples"].([]any) {
		if err := v.ValidateResult(marshal(t, ex)); err != nil {
			t.Errorf("result example %d: %v", i, err)
		}
	}
	defs := res["$defs"].(map[string]any)
	for _, form := range []string{"intent", "fullObject"} {
		for i, ex := range defs[form].(map[string]any)["examples"].([]any) {
			body := marshal(t, map[string]any{"resources": []any{ex}})
			if err := v.ValidateResult(body); err != nil {
				t.Errorf("%s example %d: %v", form, i, err)
			}
		}
	}
}

func decodeSchema(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The integration suite validates requests from several reconciler goroutines at once; run
// with -race, this fails if validation shares mutable state.
func TestValidatorIsSafeForConcurrentUse(t *testing.T) {
	v := newValidator(t)
	body, err := os.ReadFile(filepath.Join("..", "remote", "testdata", "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			for range 20 {
				if err := v.ValidatePreparedRequest(body); err != nil {
					errs <- err
					return
				}
				if err := v.ValidateResult([]byte(`{"result":"requeue","requeueAfter":"5s"}`)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// The integration suite validates every request it captures: this keeps that cheap.
func BenchmarkValidatePreparedRequest(b *testing.B) {
	v := newValidator(b)
	body, err := os.ReadFile(filepath.Join("..", "remote", "testdata", "request.json"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := v.ValidatePreparedRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
