package simulate

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/manifest"
)

// requests keeps the decoded requests a test endpoint received.
type requests struct {
	mu   sync.Mutex
	seen []map[string]any
}

func (r *requests) add(m map[string]any) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, m)
	return len(r.seen)
}

func (r *requests) all() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

// serve answers the n-th request (from 1) with answer(n, request).
func serve(t *testing.T, answer func(n int, req map[string]any) string) (string, *requests) {
	t.Helper()
	rs := &requests{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := rs.add(req)
		_, _ = io.WriteString(w, answer(n, req))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, rs
}

func remoteOpts(t *testing.T, endpoint string) Options {
	t.Helper()
	secrets, err := manifest.Read("../../examples/remote/secret.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Remote: &RemoteOptions{Endpoint: endpoint, Secrets: secrets}}
}

const webapp = `{"result":"ok","status":{"phase":"Ready","old":null},"resources":[
	{"type":"deployment","fields":{"name":"my-webapp","image":"nginx:1.27","replicas":2}},
	{"type":"service","fields":{"name":"my-webapp-svc","port":80}}]}`

func TestRemoteCyclesFeedChildrenAndStatusBack(t *testing.T) {
	url, rs := serve(t, func(n int, _ map[string]any) string {
		if n == 2 {
			return `{"result":"requeue","status":{"phase":"Ready"}}` // nothing new: no change
		}
		return webapp
	})
	rep, err := Run(t.Context(), load(t, "../../examples/remote/katalog.yaml"), remoteOpts(t, url))
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.CRDs[0].CRs[0]
	if cr.Err != "" || cr.SteadyAt != 3 {
		t.Fatalf("err %q, steady at %d; want steady at 3", cr.Err, cr.SteadyAt)
	}
	want := []Change{{Create, "deployments/my-webapp"}, {Create, "services/my-webapp-svc"}, {Update, "webapps/my-webapp/status"}}
	if d := cmp.Diff(want, cr.Cycles[0].Changes); d != "" {
		t.Errorf("cycle 1 (-want +got):\n%s", d)
	}
	seen := rs.all()
	var triggers []string
	for _, req := range seen {
		triggers = append(triggers, req["prepared"].(map[string]any)["trigger"].(string))
	}
	if d := cmp.Diff([]string{"create", "resync", "requeue"}, triggers); d != "" {
		t.Errorf("triggers (-want +got):\n%s", d)
	}
	children := seen[1]["prepared"].(map[string]any)["children"].(map[string]any)
	dep, _ := children["deployment"].(map[string]any)["my-webapp"].(map[string]any)
	owner, _ := dep["metadata"].(map[string]any)["ownerReferences"].([]any)
	if len(children) != 2 || len(owner) != 1 {
		t.Errorf("cycle 2 children: %v, want the deployment and the service, owned by the CR", children)
	}
	status := seen[1]["object"].(map[string]any)["status"].(map[string]any)
	if status["phase"] != "Ready" || status["observedGeneration"] != float64(1) || len(status["conditions"].([]any)) != 1 {
		t.Errorf("cycle 2 sees status %v", status)
	}
	if d := cmp.Diff([]Change{{Delete, "deployments/my-webapp"}, {Delete, "services/my-webapp-svc"}}, cr.OnDelete); d != "" {
		t.Errorf("on delete (-want +got):\n%s", d)
	}
}

func TestRemoteFailuresStopTheirCR(t *testing.T) {
	tests := []struct {
		name, answer, want string
	}{
		{"error result", `{"result":"error","error":"spec.image is required"}`, "ReconcileError: reconciler returned error: spec.image is required"},
		{"invalid resource", `{"resources":[{"type":"deployment","fields":{"name":"x"}}]}`,
			`InvalidResource: nothing applied: resources[0] (deployment): field "image": required`},
		{"undeclared type", `{"resources":[{"type":"configmap","fields":{"name":"x","data":{"a":"b"}}}]}`,
			`ApplyFailed: nothing applied: resources[0]: ConfigMap "x": type configmaps is not declared in managedResources`},
		{"not JSON", `<html>`, "InvalidRemoteResponse: POST "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, func(int, map[string]any) string { return tt.answer })
			rep, err := Run(t.Context(), load(t, "../../examples/remote/katalog.yaml"), remoteOpts(t, url))
			if err != nil {
				t.Fatal(err)
			}
			cr := rep.CRDs[0].CRs[0]
			if !strings.Contains(cr.Err, tt.want) || len(cr.Cycles) != 0 {
				t.Errorf("err %q after %d cycles, want %q at once", cr.Err, len(cr.Cycles), tt.want)
			}
		})
	}
}

func TestWriteStatusMergesLikeOrkRun(t *testing.T) {
	cl := newCluster(nil, namer{})
	cr := mustObject(t, `{"apiVersion":"myorg.io/v1","kind":"WebApp","metadata":{"name":"a","namespace":"default","generation":3},
		"status":{"keep":1,"drop":2,"conditions":[{"type":"Other","status":"False"},{"type":"Ready","status":"False"}]}}`)
	cl.put(cr)
	k := keyOf(cr)
	if !cl.writeStatus(k, map[string]any{"drop": nil, "phase": "Ready"}) {
		t.Fatal("no change reported")
	}
	got := cl.get(k).Object["status"]
	want := map[string]any{"keep": int64(1), "phase": "Ready", "observedGeneration": int64(3), "conditions": []any{
		map[string]any{"type": "Other", "status": "False"},
		map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded", "message": "reconciled", "observedGeneration": int64(3)},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	if cl.writeStatus(k, map[string]any{"phase": "Ready"}) {
		t.Error("the same status again reported a change")
	}
}

func mustObject(t *testing.T, j string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(j)); err != nil {
		t.Fatal(err)
	}
	return u
}
