package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/output"
)

// blameAPIServer serves discovery for deployments and a custom resource kind, and one
// object per path: enough for ork blame.
func blameAPIServer(t *testing.T, objects map[string]any) string {
	t.Helper()
	resources := map[string]metav1.APIResourceList{
		"/api/v1": {GroupVersion: "v1"},
		"/apis/apps/v1": {GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: metav1.Verbs{"get"}}}},
		"/apis/example.com/v1": {GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "apps", SingularName: "app", Namespaced: true, Kind: "App", Verbs: metav1.Verbs{"get"}}}},
	}
	group := func(name string) metav1.APIGroup {
		v := metav1.GroupVersionForDiscovery{GroupVersion: name + "/v1", Version: "v1"}
		return metav1.APIGroup{Name: name, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch p := r.URL.Path; {
		case p == "/api":
			body = metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}
		case p == "/apis":
			body = metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group("apps"), group("example.com")}}
		case resources[p].GroupVersion != "":
			l := resources[p]
			l.TypeMeta = metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}
			body = l
		case objects[p] != nil:
			body = objects[p]
		default:
			w.WriteHeader(http.StatusNotFound)
			body = metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
				Message: "not found"}
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: shop}}]
current-context: x
`, srv.URL)
	if err := os.WriteFile(kc, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

func TestBlameCommand(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)
	newID := func(i int) string {
		s, err := decision.NewID(t0.Add(time.Duration(i)*time.Minute), bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 16)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	created, updated := newID(1), newID(2)
	child := decision.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	cr := decision.Object{Ref: decision.Ref{APIVersion: "example.com/v1", Kind: "App", Namespace: "shop", Name: "web"}}
	logPath := filepath.Join(t.TempDir(), "decisions.log")
	l, err := decisionlog.Open(logPath, nil, decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(replicas int64, image string) map[string]any {
		return map[string]any{"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": image}}}}}}
	}
	cr.Generation, cr.ResourceVersion = 1, "100"
	for _, e := range []decision.Entry{
		{Decision: created, Time: t0.Add(time.Minute), Trigger: "create", Object: cr, Outcome: "ok",
			Children: []decision.Child{{Ref: child, ResourceVersionAfter: "200", Fields: decision.ChangedFields(nil, spec(2, "nginx:1")), Outcome: decision.ChildCreated}}},
		{Decision: updated, Time: t0.Add(2 * time.Minute), Trigger: "related", Object: decision.Object{Ref: cr.Ref, Generation: 1, ResourceVersion: "100"}, Outcome: "ok",
			Related:  []decision.Related{{Name: "config", Ref: decision.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-config"}, ResourceVersion: "501"}},
			Children: []decision.Child{{Ref: child, ResourceVersionBefore: "200", ResourceVersionAfter: "230", Fields: decision.ChangedFields(spec(2, "nginx:1"), spec(3, "nginx:1")), Outcome: decision.ChildApplied}}},
	} {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mtime := metav1.NewTime(t0.Add(2 * time.Minute))
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop",
			"annotations":     map[string]any{decision.Annotation: updated},
			"ownerReferences": []any{map[string]any{"apiVersion": "example.com/v1", "kind": "App", "name": "web", "uid": "u1", "controller": true}},
			"managedFields": []any{map[string]any{"manager": "orkestra", "operation": "Apply", "apiVersion": "apps/v1", "time": mtime.UTC().Format(time.RFC3339), "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}, "f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
					`k:{"name":"app"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:image": map[string]any{}}}}}}}}}},
		"spec": spec(3, "nginx:1")["spec"]}
	app := map[string]any{"apiVersion": "example.com/v1", "kind": "App", "metadata": map[string]any{"name": "web", "namespace": "shop", "generation": 1},
		"status": map[string]any{decision.StatusField: decision.LastDecision{ID: updated, Time: t0.Add(2 * time.Minute), Trigger: "related", Inputs: "sha256:00"}.Status()}}
	kc := blameAPIServer(t, map[string]any{
		"/apis/apps/v1/namespaces/shop/deployments/web": deploy,
		"/apis/example.com/v1/namespaces/shop/apps/web": app,
	})
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"replicas-from-the-log", []string{"deployment/web", "--field", "spec.replicas", "--decision-log", logPath}, 0},
		{"image-from-the-log", []string{"deploy/web", "--field", "spec.template.spec.containers[0].image", "--decision-log", logPath}, 0},
		{"replicas-without-the-log", []string{"deployments.apps/web", "--field", "spec.replicas", "-n", "shop"}, 0},
		{"json", []string{"deployment/web", "--field", "spec.replicas", "--decision-log", logPath, "-o", "json"}, 0},
		{"not-found", []string{"deployment/api", "--field", "spec.replicas"}, 1},
		{"unknown-kind", []string{"widget/web", "--field", "spec.replicas"}, 1},
		{"no-field", []string{"deployment/web"}, 2},
		{"bad-field", []string{"deployment/web", "--field", "spec..replicas"}, 2},
		{"bad-argument", []string{"web", "--field", "spec.replicas"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"blame", "--kubeconfig", kc}, tt.args...)
			code := Main(context.Background(), args, output.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errOut.String())
			}
			got := fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, out.String(), strings.ReplaceAll(errOut.String(), logPath, "LOG"))
			golden.Assert(t, filepath.Join("testdata", "blame", tt.name+".golden"), []byte(strings.ReplaceAll(got, logPath, "LOG")))
		})
	}
}
