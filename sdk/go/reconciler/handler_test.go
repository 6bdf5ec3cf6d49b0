package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const requestBody = `{"key":"default/web","gvk":{"Group":"myorg.io","Version":"v1","Kind":"WebApp"},` +
	`"object":{"apiVersion":"myorg.io/v1","kind":"WebApp","metadata":{"name":"web","namespace":"default"},"spec":{"image":"nginx"}},` +
	`"args":{},"prepared":{"trigger":"create","attempt":1,"generation":1,"deleting":false}}`

func tokenFile(t *testing.T, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func okFunc(_ context.Context, req *PreparedRequest) (Result, error) {
	return OK().WithStatus(map[string]any{"name": req.Object.Name()}), nil
}

func do(h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandlerChecksTheTokenOfTheFileOnEveryRequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		authHeader string
		header     map[string]string
		want       int
	}{
		{"bearer token", "", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"no header", "", nil, 401},
		{"wrong token", "", map[string]string{"Authorization": "Bearer wrong"}, 401},
		{"token without Bearer", "", map[string]string{"Authorization": "s3cret"}, 401},
		{"token prefix", "", map[string]string{"Authorization": "Bearer s3cre"}, 401},
		{"custom header carries the bare token", "X-Token", map[string]string{"X-Token": "s3cret"}, 200},
		{"custom header with Bearer", "X-Token", map[string]string{"X-Token": "Bearer s3cret"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHandler(okFunc, HandlerOptions{TokenFile: tokenFile(t, "s3cret"), AuthHeader: tc.authHeader})
			if err != nil {
				t.Fatal(err)
			}
			if w := do(h, "POST", "/reconcile", requestBody, tc.header); w.Code != tc.want {
				t.Errorf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
		})
	}
}

func TestHandlerUsesARotatedTokenWithoutRestart(t *testing.T) {
	file := tokenFile(t, "old")
	h, err := NewHandler(okFunc, HandlerOptions{TokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(h, "POST", "/reconcile", requestBody, map[string]string{"Authorization": "Bearer old"}); w.Code != 200 {
		t.Fatalf("old token: %d", w.Code)
	}
	if err := os.WriteFile(file, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if w := do(h, "POST", "/reconcile", requestBody, map[string]string{"Authorization": "Bearer old"}); w.Code != 401 {
		t.Errorf("old token after rotation: %d, want 401", w.Code)
	}
	if w := do(h, "POST", "/reconcile", requestBody, map[string]string{"Authorization": "Bearer new"}); w.Code != 200 {
		t.Errorf("new token: %d, want 200", w.Code)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if w := do(h, "POST", "/reconcile", requestBody, map[string]string{"Authorization": "Bearer new"}); w.Code != 500 {
		t.Errorf("token file gone: %d, want 500", w.Code)
	}
}

func TestNewHandlerWantsATokenFileOrNoAuth(t *testing.T) {
	if _, err := NewHandler(okFunc, HandlerOptions{}); err == nil {
		t.Error("no token file and no NoAuth: want an error")
	}
	if _, err := NewHandler(nil, HandlerOptions{NoAuth: true}); err == nil {
		t.Error("no Func: want an error")
	}
}

func TestHandlerAnswers(t *testing.T) {
	type answerCase struct {
		name       string
		fn         Func
		method     string
		path       string
		body       string
		wantStatus int
		wantBody   string // the JSON answer, or a part of a text one
		maxBody    int64  // default: DefaultMaxBodyBytes
	}
	for _, tc := range []answerCase{
		{"ok with status", okFunc, "POST", "/reconcile", requestBody, 200, `{"result":"ok","status":{"name":"web"}}`, 0},
		{"health", okFunc, "GET", "/healthz", "", 200, "ok", 0},
		{"GET of the reconcile path", okFunc, "GET", "/reconcile", "", 405, "", 0},
		{"unknown path", okFunc, "POST", "/other", requestBody, 404, "", 0},
		{"body that is no JSON", okFunc, "POST", "/reconcile", "{", 400, "not a PreparedRequest", 0},
		{"body over the limit", okFunc, "POST", "/reconcile", `{"key":"` + strings.Repeat("x", 200) + `"}`, 413, "over 100 bytes", 100},
		{"error of the Func", func(context.Context, *PreparedRequest) (Result, error) {
			return OK(), errors.New("database down")
		}, "POST", "/reconcile", requestBody, 200, `{"result":"error","error":"database down"}`, 0},
		{"panic of the Func", func(context.Context, *PreparedRequest) (Result, error) {
			panic("boom")
		}, "POST", "/reconcile", requestBody, 200, `{"result":"error","error":"the reconciler panicked reconciling default/web"}`, 0},
		{"answer missing a required field", func(context.Context, *PreparedRequest) (Result, error) {
			return OK().WithResources(Deployment(DeploymentFields{Name: "web"})), nil
		}, "POST", "/reconcile", requestBody, 200,
			`{"result":"error","error":"the reconciler's answer is invalid: resources[0]: deployment: fields.image is required"}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHandler(tc.fn, HandlerOptions{NoAuth: true, MaxBodyBytes: tc.maxBody})
			if err != nil {
				t.Fatal(err)
			}
			w := do(h, tc.method, tc.path, tc.body, nil)
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.wantStatus, w.Body)
			}
			got := strings.TrimSpace(w.Body.String())
			if strings.HasPrefix(tc.wantBody, "{") {
				if got != tc.wantBody {
					t.Errorf("body\n got %s\nwant %s", got, tc.wantBody)
				}
				if v := w.Header().Get(ContractVersionHeader); v != ContractVersion {
					t.Errorf("%s = %q, want %q", ContractVersionHeader, v, ContractVersion)
				}
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q", ct)
				}
			} else if !strings.Contains(got, tc.wantBody) {
				t.Errorf("body %q, want it to contain %q", got, tc.wantBody)
			}
		})
	}
}

func TestHandlerTellsOfAnotherMajorContractVersion(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   string
	}{
		{"", ""},
		{"1", ""},
		{"1.3", ""},
		{"2", "2"},
		{"2.1", "2.1"},
	} {
		var got string
		h, err := NewHandler(okFunc, HandlerOptions{NoAuth: true, OnContractMismatch: func(v string) { got = v }})
		if err != nil {
			t.Fatal(err)
		}
		w := do(h, "POST", "/reconcile", requestBody, map[string]string{ContractVersionHeader: tc.header})
		if w.Code != 200 || got != tc.want {
			t.Errorf("ork sends %q: status %d, mismatch %q, want 200 and %q", tc.header, w.Code, got, tc.want)
		}
	}
}

func TestHandlerDecodesTheSchemaExample(t *testing.T) {
	data, err := os.ReadFile("../../../schema/prepared-request.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Examples []json.RawMessage }
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	var seen *PreparedRequest
	h, err := NewHandler(func(_ context.Context, req *PreparedRequest) (Result, error) {
		seen = req
		return OK(), nil
	}, HandlerOptions{NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	w := do(h, "POST", "/reconcile", string(s.Examples[0]), nil)
	if w.Code != 200 || seen == nil {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var spec struct{ Replicas int }
	if err := seen.Object.DecodeSpec(&spec); err != nil {
		t.Fatal(err)
	}
	if seen.Key != "default/my-webapp" || seen.GVK.Kind != "WebApp" || seen.Prepared.Trigger != TriggerCreate ||
		seen.Object.Namespace() != "default" || spec.Replicas != 2 || seen.Prepared.Children == nil {
		t.Errorf("decoded %+v (spec %+v)", seen, spec)
	}
}
