package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/version"
)

func goldenCRD(endpoint string) *katalog.CRD {
	return crd(endpoint, func(rem *katalog.Remote) {
		rem.Args = map[string]any{
			"logLevel":    "{{ .spec.logLevel }}",
			"environment": "{{ .spec.environment | upper }}",
			"replicas":    "{{ .spec.replicas }}",
			"debug":       "{{ .spec.debug }}",
			"port":        "8080", // a literal, not a template: stays a string
			"image":       map[string]any{"ref": "{{ .spec.image }}", "pull": []any{"{{ .metadata.name }}-pull", int64(1)}},
		}
		rem.Payload.Object.Exclude = []string{"metadata.managedFields", `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`, "status", "spec.absent.deeper"}
		rem.Payload.Children = katalog.ChildrenPayload{Enabled: true, Exclude: []string{"metadata.managedFields", "status"}}
	})
}

func TestRequestBodyMatchesTheSeedShape(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{"result":"ok"}`))
	r := mustNew(t, goldenCRD(srv.URL), Options{})
	req := Request{
		Key: "default/my-webapp", Object: webapp(), Trigger: TriggerUpdate, Attempt: 2,
		Children: map[string]map[string]map[string]any{
			"deployment": {"my-webapp": child("Deployment", "my-webapp")},
			"service":    {"my-webapp-svc": child("Service", "my-webapp-svc")},
		},
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := next(t, reqs)

	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got.body, "", "  "); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	golden(t, "request.json", pretty.Bytes())

	// The golden file shows the whole body; these pin the contract points by name.
	body := decode(t, got.body)
	if d := cmp.Diff(map[string]any{"Group": "myorg.io", "Version": "v1", "Kind": "WebApp"}, body["gvk"]); d != "" {
		t.Errorf("gvk (-want +got):\n%s", d)
	}
	args := body["args"].(map[string]any)
	if args["replicas"] != json.Number("2") || args["debug"] != true || args["port"] != "8080" {
		t.Errorf("args not coerced: replicas=%#v debug=%#v port=%#v", args["replicas"], args["debug"], args["port"])
	}
	meta := body["object"].(map[string]any)["metadata"].(map[string]any)
	if _, ok := meta["managedFields"]; ok {
		t.Error("object.metadata.managedFields was not excluded")
	}
	if _, ok := body["object"].(map[string]any)["status"]; ok {
		t.Error("object.status was not excluded")
	}
	if d := cmp.Diff(map[string]any{"note": "a<b&c"}, meta["annotations"]); d != "" {
		t.Errorf("escaped-dot exclude (-want +got):\n%s", d)
	}
	prep := body["prepared"].(map[string]any)
	if prep["trigger"] != "update" || prep["attempt"] != json.Number("2") || prep["generation"] != json.Number("3") || prep["deleting"] != false {
		t.Errorf("prepared = %v", prep)
	}
	dep := prep["children"].(map[string]any)["deployment"].(map[string]any)["my-webapp"].(map[string]any)
	if _, ok := dep["status"]; ok {
		t.Error("children.exclude not applied: status present")
	}
	if _, ok := dep["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("children.exclude not applied: managedFields present")
	}
}

func TestRequestHeaders(t *testing.T) {
	srv, reqs := newEndpoint(t, answer(200, `{}`))
	r := mustNew(t, crd(srv.URL+"/reconcile", nil), Options{})
	if _, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerCreate, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	got := next(t, reqs)
	if got.method != http.MethodPost || got.path != "/reconcile" {
		t.Errorf("request = %s %s, want POST /reconcile", got.method, got.path)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if ua := got.header.Get("User-Agent"); ua != version.UserAgent() || !strings.HasPrefix(ua, "ork/") {
		t.Errorf("User-Agent = %q, want %q", ua, version.UserAgent())
	}
	if v := got.header.Get("Ork-Contract-Version"); v != ContractVersion {
		t.Errorf("Ork-Contract-Version = %q, want %s", v, ContractVersion)
	}
	if a := got.header.Get("Authorization"); a != "" {
		t.Errorf("Authorization = %q without auth configured", a)
	}
}

func TestPreparedFieldsFollowTheObject(t *testing.T) {
	deleting := webapp()
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-02T03:04:05Z"
	tests := []struct {
		name      string
		children  bool
		lastApply bool
		req       Request
		want      string // the prepared object, compact
	}{
		{
			name: "children disabled: no children key",
			req:  Request{Object: webapp(), Trigger: TriggerResync, Attempt: 1},
			want: `{"trigger":"resync","attempt":1,"generation":3,"deleting":false}`,
		},
		{
			name: "children enabled, none owned: empty object", children: true,
			req:  Request{Object: webapp(), Trigger: TriggerUpdate, Attempt: 1},
			want: `{"trigger":"update","attempt":1,"generation":3,"deleting":false,"children":{}}`,
		},
		{
			name: "deletionTimestamp set: deleting",
			req:  Request{Object: deleting, Trigger: TriggerDelete, Attempt: 4},
			want: `{"trigger":"delete","attempt":4,"generation":3,"deleting":true}`,
		},
		{
			name: "lastApply enabled: the previous result's outcomes after children", children: true, lastApply: true,
			req: Request{Object: webapp(), Trigger: TriggerResync, Attempt: 1, LastApply: []AppliedResource{
				{Type: "deployment", Name: "web", Namespace: "default", Outcome: OutcomeConflict,
					Message: "conflict with another field manager", ConflictingManagers: []string{"hpa"}},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", Namespace: "default", Outcome: OutcomeUnchanged},
			}},
			want: `{"trigger":"resync","attempt":1,"generation":3,"deleting":false,"children":{},"lastApply":[` +
				`{"type":"deployment","name":"web","namespace":"default","outcome":"conflict","message":"conflict with another field manager","conflictingManagers":["hpa"]},` +
				`{"apiVersion":"v1","kind":"ConfigMap","name":"cfg","namespace":"default","outcome":"unchanged"}]}`,
		},
		{
			name: "lastApply enabled, the previous result had no resources: an empty list", lastApply: true,
			req:  Request{Object: webapp(), Trigger: TriggerResync, Attempt: 1, LastApply: []AppliedResource{}},
			want: `{"trigger":"resync","attempt":1,"generation":3,"deleting":false,"lastApply":[]}`,
		},
		{
			name: "lastApply enabled, nothing applied yet: absent", lastApply: true,
			req:  Request{Object: webapp(), Trigger: TriggerCreate, Attempt: 1},
			want: `{"trigger":"create","attempt":1,"generation":3,"deleting":false}`,
		},
		{
			name: "lastApply disabled: absent whatever the engine passes",
			req:  Request{Object: webapp(), Trigger: TriggerResync, Attempt: 1, LastApply: []AppliedResource{{Type: "deployment", Name: "web", Outcome: OutcomeApplied}}},
			want: `{"trigger":"resync","attempt":1,"generation":3,"deleting":false}`,
		},
		{
			name: "dry run: dryRun true",
			req:  Request{Object: webapp(), Trigger: TriggerCreate, Attempt: 1, DryRun: true},
			want: `{"trigger":"create","attempt":1,"generation":3,"deleting":false,"dryRun":true}`,
		},
		{
			name: "no metadata.generation: 0",
			req:  Request{Object: map[string]any{"metadata": map[string]any{"name": "x"}}, Trigger: TriggerRequeue, Attempt: 1},
			want: `{"trigger":"requeue","attempt":1,"generation":0,"deleting":false}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustNew(t, crd("http://127.0.0.1:1/", func(rem *katalog.Remote) {
				rem.Payload.Children.Enabled = tt.children
				rem.Payload.LastApply = tt.lastApply
			}), Options{})
			body, err := r.buildBody(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Prepared json.RawMessage }
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Prepared) != tt.want {
				t.Errorf("prepared = %s\nwant       %s", got.Prepared, tt.want)
			}
		})
	}
}

func TestArgsAreAlwaysAnObject(t *testing.T) {
	r := mustNew(t, crd("http://127.0.0.1:1/", nil), Options{})
	body, err := r.buildBody(Request{Key: "k", Object: webapp()})
	if err != nil {
		t.Fatal(err)
	}
	if args := decode(t, body)["args"]; !cmp.Equal(args, map[string]any{}) {
		t.Errorf("args = %#v, want {}", args)
	}
}

func TestReconcileDoesNotMutateTheCacheObject(t *testing.T) {
	srv, _ := newEndpoint(t, answer(200, `{"result":"ok","status":{"phase":"Ready"}}`))
	r := mustNew(t, goldenCRD(srv.URL), Options{})
	obj := webapp()
	children := map[string]map[string]map[string]any{"deployment": {"my-webapp": child("Deployment", "my-webapp")}}
	objBefore, childrenBefore := clone(obj), clone(map[string]any{"deployment": map[string]any{"my-webapp": children["deployment"]["my-webapp"]}})

	for range 2 { // twice: a second call must see the same, complete object
		if _, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: obj, Children: children, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(objBefore, any(obj)); d != "" {
		t.Errorf("Reconcile modified the cache object (-before +after):\n%s", d)
	}
	childrenAfter := map[string]any{"deployment": map[string]any{"my-webapp": children["deployment"]["my-webapp"]}}
	if d := cmp.Diff(childrenBefore, any(childrenAfter)); d != "" {
		t.Errorf("Reconcile modified the children (-before +after):\n%s", d)
	}
}

func TestPathTreeSharesUntouchedSubtrees(t *testing.T) {
	paths, err := parsePaths("exclude", []string{"metadata.managedFields", "metadata.annotations", "metadata", "spec.template.x", "nope.deeper"})
	if err != nil {
		t.Fatal(err)
	}
	obj := webapp()
	obj["spec"].(map[string]any)["template"] = map[string]any{"x": 1, "y": 2}
	got := without(obj, paths)
	want := map[string]any{
		"apiVersion": "myorg.io/v1", "kind": "WebApp",
		"spec":   map[string]any{"replicas": int64(2), "logLevel": "info", "environment": "production", "image": "nginx:1.27", "debug": "true", "template": map[string]any{"y": 2}},
		"status": map[string]any{"phase": "Pending"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("without (-want +got):\n%s", d)
	}
	if reflect.ValueOf(got["status"]).Pointer() != reflect.ValueOf(obj["status"]).Pointer() {
		t.Error("without copied status, which no path touches")
	}
	if _, ok := obj["metadata"]; !ok {
		t.Error("without modified its input")
	}
	if _, ok := obj["spec"].(map[string]any)["template"].(map[string]any)["x"]; !ok {
		t.Error("without modified a nested map of its input")
	}
}

// TestArgsRenderLikeRenderValue pins the precompiled args to render.Value's behaviour, which
// every other Katalog template follows.
func TestArgsRenderLikeRenderValue(t *testing.T) {
	args := map[string]any{
		"replicas": "{{ .spec.replicas }}", "debug": "{{ .spec.debug }}", "level": "{{ .spec.logLevel | upper }}",
		"literal": "8080", "number": int64(3), "float": 1.5, "null": nil, "bool": false,
		"nested":   map[string]any{"name": "{{ .metadata.name }}-svc", "list": []any{"{{ .metadata.generation }}", "x"}},
		"fallback": `{{ index .spec "missing" | default "x" }}`, "empty": "{{ .spec.nothing | default \"\" }}",
	}
	obj := webapp()
	obj["spec"].(map[string]any)["nothing"] = nil
	want, err := render.Value("args", args, obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := compileArgs("args", args)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f(obj)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("compiled args differ from render.Value (-render.Value +compiled):\n%s", d)
	}
}
