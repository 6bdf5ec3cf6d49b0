package wireschema

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/testkit"
)

var examplesDir = filepath.Join("..", "..", "examples", "remote")

// bins builds each binary the tests run once; TestMain removes them.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(m.Run())) }

// The example reconcilers run for real, and ork's own remote client, configured from
// examples/remote/katalog.yaml, calls them: every request it sends and every answer they
// give is checked against the schemas.
func TestExampleReconcilersAnswerWithValidResults(t *testing.T) {
	v := newValidator(t)
	token := exampleToken(t)
	goReconciler := reconcilertest.BuildGo(t, &bins)
	for _, ex := range []struct {
		name  string
		start func(t *testing.T) string
	}{
		{"go", func(t *testing.T) string { return reconcilertest.StartGo(t, goReconciler, token) }},
		{"python", func(t *testing.T) string { return reconcilertest.StartPython(t, token) }},
	} {
		t.Run(ex.name, func(t *testing.T) {
			endpoint := ex.start(t)
			rec := &recorder{}
			r := exampleReconciler(t, endpoint, token, rec)

			t.Run("create", func(t *testing.T) {
				res := call(t, r, v, rec, exampleCR(t))
				if len(res.Resources) != 2 || res.Status["phase"] != "Ready" {
					t.Fatalf("want a deployment, a service and phase Ready, got %+v", res)
				}
				for i, raw := range res.Resources {
					if _, err := resources.Build(raw, resources.OptionsFor("default", "my-webapp")); err != nil {
						t.Errorf("resources[%d]: %v", i, err)
					}
				}
			})
			t.Run("deleting", func(t *testing.T) {
				cr := exampleCR(t)
				cr["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-02T03:04:05Z"
				if res := call(t, r, v, rec, cr); len(res.Resources) != 0 {
					t.Errorf("a deleted WebApp got resources: %+v", res.Resources)
				}
			})
			t.Run("error result", func(t *testing.T) {
				cr := exampleCR(t)
				delete(cr["spec"].(map[string]any), "image")
				res, err := r.Reconcile(t.Context(), remote.Request{Key: "default/my-webapp", Object: cr, Trigger: remote.TriggerUpdate, Attempt: 1})
				out := remote.Decide(res, err)
				if out.Success || !strings.Contains(out.Message, "spec.image is required") {
					t.Errorf("want a failure naming spec.image, got %+v", out)
				}
				checkExchange(t, v, rec)
			})
			t.Run("wrong token", func(t *testing.T) {
				for _, auth := range []string{"", "Bearer wrong-" + token, token} {
					if code := post(t, endpoint, auth); code != http.StatusUnauthorized {
						t.Errorf("Authorization %q: HTTP %d, want 401", auth, code)
					}
				}
			})
		})
	}
}

// call reconciles cr once through ork's client and checks both bodies of the exchange.
func call(t *testing.T, r *remote.Reconciler, v *Validator, rec *recorder, cr map[string]any) *remote.Result {
	t.Helper()
	children := map[string]map[string]map[string]any{
		"deployment": {"my-webapp": {"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "my-webapp", "namespace": "default", "managedFields": []any{map[string]any{"manager": "orkestra"}}},
			"spec":     map[string]any{"replicas": int64(2)}}},
	}
	res, err := r.Reconcile(t.Context(), remote.Request{Key: "default/my-webapp", Object: cr, Trigger: remote.TriggerCreate, Attempt: 1, Children: children})
	if err != nil {
		t.Fatal(err)
	}
	if out := remote.Decide(res, err); !out.Success {
		t.Fatalf("ork did not take the answer: %+v", out)
	}
	checkExchange(t, v, rec)
	return res
}

func checkExchange(t *testing.T, v *Validator, rec *recorder) {
	t.Helper()
	req, resp := rec.last()
	if err := v.ValidatePreparedRequest(req); err != nil {
		t.Errorf("ork's request: %v\n%s", err, req)
	}
	if err := v.ValidateResult(resp); err != nil {
		t.Errorf("reconciler's answer: %v\n%s", err, resp)
	}
}

// exampleReconciler is ork's remote client for the example Katalog's webapp CRD, pointed at
// endpoint, reading token as the example Secret, recording each exchange in rec.
func exampleReconciler(t *testing.T, endpoint, token string, rec *recorder) *remote.Reconciler {
	t.Helper()
	set, findings, err := katalog.Load([]string{filepath.Join(examplesDir, "katalog.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if katalog.HasErrors(findings) {
		t.Fatalf("example katalog: %+v", findings)
	}
	crd := set.CRD("webapp")
	crd.OperatorBox.Reconcile.Remote.Endpoint = endpoint
	ref := crd.OperatorBox.Reconcile.Remote.Auth.SecretRef
	secrets := secretSource{key: ref.Namespace + "/" + ref.Name + "/" + ref.Key, value: token}
	r, err := remote.New(crd, remote.Options{Secrets: secrets, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// exampleCR is examples/remote/cr.yaml as the informer would hold it.
func exampleCR(t *testing.T) map[string]any {
	t.Helper()
	var cr map[string]any
	readYAML(t, filepath.Join(examplesDir, "cr.yaml"), &cr)
	meta := cr["metadata"].(map[string]any)
	meta["uid"], meta["generation"], meta["resourceVersion"] = "3f1c-uid", int64(1), "4711"
	meta["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
	return cr
}

// exampleToken is the token of examples/remote/secret.yaml, the one `make demo` uses.
func exampleToken(t *testing.T) string {
	t.Helper()
	var s struct {
		StringData map[string]string `json:"stringData"`
	}
	readYAML(t, filepath.Join(examplesDir, "secret.yaml"), &s)
	if s.StringData["token"] == "" {
		t.Fatal("examples/remote/secret.yaml has no stringData.token")
	}
	return s.StringData["token"]
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func post(t *testing.T, endpoint, auth string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(validRequest))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// secretSource holds the one Secret key the example Katalog reads.
type secretSource struct{ key, value string }

func (s secretSource) SecretValue(_ context.Context, namespace, name, key string) ([]byte, error) {
	if namespace+"/"+name+"/"+key != s.key {
		return nil, fmt.Errorf("secret %s/%s has no key %s", namespace, name, key)
	}
	return []byte(s.value), nil
}

// recorder is a real HTTP transport that keeps the bodies of the last exchange.
type recorder struct {
	mu            sync.Mutex
	request, resp []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.GetBody != nil { // a copy: a RoundTripper must not consume the caller's body
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		if body, err = io.ReadAll(rc); err != nil {
			return nil, err
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.request, r.resp = body, data
	return resp, nil
}

func (r *recorder) last() (request, response []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.request, r.resp
}
