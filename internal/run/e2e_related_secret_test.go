package run_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/trace"
)

// A related Secret by a constant name (allowSecrets) and a label selector, under rbac gen's
// role alone: the Secret is read and watched by its name only (resourceNames), its data
// reaches the endpoint and no log line; a new object the selector matches passes the CR
// again, one it does not match does not.
func TestRelatedSecretAndSelector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	payload := `              related:
                - {as: creds, kind: Secret, name: db-credentials, allowSecrets: true}
                - {as: settings, kind: ConfigMap, selector: {matchLabels: {app: "{{ .metadata.name }}"}}}
`
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: payload})
	name := "ork-" + f.NS
	f.GrantGeneratedRBAC(set, name)
	if allowed(t, f.NS, name, "list", "secrets") {
		t.Error("the generated role lets ork list every Secret")
	}

	const password = "pw-8f3a1c9e"
	secrets := env.Clientset.CoreV1().Secrets(f.NS)
	// Created as kubectl apply creates it: the manifest, data in clear, in an annotation.
	applied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db-credentials"},"stringData":{"pw":"` + password + `"}}`
	if _, err := secrets.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: applied}},
		StringData: map[string]string{"pw": password}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	recDir := t.TempDir()
	rec, err := exchange.NewRecorder(recDir, exchange.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng := f.Start(set, env.ServiceAccountConfig(f.NS, name), func(o *run.Options) {
		o.ChildMinInterval, o.DebugDecisions, o.Record = 100*time.Millisecond, true, rec.Record
	})
	f.CreateCR("web", map[string]any{})
	first := ep.NextMatching(t, "a call for web", func(c call) bool { return c.CRName() == "web" })
	rel, _ := relatedOf(t, first)
	if len(rel["creds"]) != 1 || rel["settings"] == nil || len(rel["settings"]) != 0 {
		t.Fatalf("prepared.related = %v, want the Secret and no settings yet", rel)
	}
	if data, _ := rel["creds"][0]["data"].(map[string]any); data["pw"] != base64.StdEncoding.EncodeToString([]byte(password)) {
		t.Errorf("the Secret's data = %v, want pw", rel["creds"][0]["data"])
	}
	for _, c := range ep.Recorded() {
		if strings.Contains(string(c.Raw), corev1.LastAppliedConfigAnnotation) {
			t.Errorf("the endpoint got the Secret's last-applied annotation: %s", c.Raw)
		}
	}
	f.WaitReady("web", "True")

	cms := env.Clientset.CoreV1().ConfigMaps(f.NS)
	for _, cm := range []struct{ name, app string }{{"web-a", "web"}, {"db-a", "db"}} {
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name, Labels: map[string]string{"app": cm.app}}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ep.NextMatching(t, "web's pass with its selected ConfigMap", func(c call) bool {
		rel, _ := relatedOf(t, c)
		return c.CRName() == "web" && len(rel["settings"]) == 1 && rel["settings"][0]["metadata"].(map[string]any)["name"] == "web-a"
	})
	if _, err := secrets.Patch(t.Context(), "db-credentials", types.MergePatchType, []byte(`{"stringData":{"pw":"rotated"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "web's pass with the rotated Secret", func(c call) bool {
		rel, _ := relatedOf(t, c)
		data, _ := rel["creds"][0]["data"].(map[string]any)
		return c.CRName() == "web" && data["pw"] == base64.StdEncoding.EncodeToString([]byte("rotated"))
	})
	// db-a matches no CR's selector: after the rotation's pass, nothing more comes. Bound: the
	// watch delivers in milliseconds here and ChildMinInterval is 100ms.
	before := len(ep.Recorded())
	if _, err := cms.Patch(t.Context(), "db-a", types.MergePatchType, []byte(`{"data":{"x":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * time.Second)
	for done := false; !done; {
		select {
		case <-ep.Arrived():
		case <-deadline:
			done = true
		}
	}
	if n := len(ep.Recorded()) - before; n != 0 {
		t.Errorf("%d calls after a change to a ConfigMap no selector matches, want none", n)
	}
	// The decision trace names what each pass read, with resourceVersions, and never data.
	got, err := trace.Client{Base: eng.HealthAddr()}.Get(t.Context(), trace.Key{CRD: "app", Namespace: f.NS, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	last := got.Decisions[len(got.Decisions)-1]
	reads := strings.Join(last.Related, "; ")
	if !strings.Contains(reads, "creds: secrets "+f.NS+"/db-credentials@") || !strings.Contains(reads, "settings: configmaps "+f.NS+"/web-a@") {
		t.Errorf("the last decision read %q, want the Secret and web-a with their resourceVersions", reads)
	}
	if first := got.Decisions[0].Related; len(first) != 2 || !strings.HasSuffix(first[1], "(none)") {
		t.Errorf("the first decision read %q, want the Secret and the selector's (none)", first)
	}
	logs := f.Logs.String()
	if strings.Contains(logs, password) || strings.Contains(logs, base64.StdEncoding.EncodeToString([]byte(password))) {
		t.Error("the related Secret's data is in ork's log")
	}
	traced, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(traced), password) {
		t.Error("the related Secret's data is in the decision trace")
	}
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(recDir, "*.json"))
	if len(files) == 0 {
		t.Fatal("no recording written")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), password) || strings.Contains(string(data), base64.StdEncoding.EncodeToString([]byte(password))) {
			t.Errorf("the related Secret's data is in the recording %s", file)
		}
	}
	if strings.Contains(strings.ToLower(logs), "forbidden") {
		t.Errorf("ork logged a forbidden error under the generated role:\n%s", logs)
	}
}
