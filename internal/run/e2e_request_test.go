package run_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// 1. A created CR reaches the endpoint as the seed's PreparedRequest.
func TestCreateSendsPreparedRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 3, "logLevel": "debug", "secretNote": "do not send"})

	c := ep.Next(t)
	if got := c.Body["key"]; got != f.NS+"/web" {
		t.Errorf("key = %v, want %s/web", got, f.NS)
	}
	gvk, _ := c.Body["gvk"].(map[string]any)
	if gvk["Group"] != f.Group || gvk["Version"] != "v1" || gvk["Kind"] != "App" {
		t.Errorf("gvk = %v, want capitalised Group/Version/Kind of the CR", gvk)
	}
	obj, _ := c.Body["object"].(map[string]any)
	if _, found, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "annotations"); found {
		t.Error("object.metadata.annotations was sent although payload.object.exclude lists it")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "secretNote"); found {
		t.Error("object.spec.secretNote was sent although payload.object.exclude lists it")
	}
	if name, _, _ := unstructured.NestedString(obj, "metadata", "name"); name != "web" {
		t.Errorf("object.metadata.name = %q, want web", name)
	}
	args, _ := c.Body["args"].(map[string]any)
	if args["replicas"] != float64(3) {
		t.Errorf("args.replicas = %#v, want the JSON number 3 (rendered and coerced)", args["replicas"])
	}
	if args["logLevel"] != "debug" {
		t.Errorf("args.logLevel = %#v, want debug", args["logLevel"])
	}
	prepared, _ := c.Body["prepared"].(map[string]any)
	if prepared["trigger"] != "create" || prepared["attempt"] != float64(1) || prepared["deleting"] != false ||
		prepared["generation"] != float64(1) {
		t.Errorf("prepared = %v, want trigger create, attempt 1, generation 1, deleting false", prepared)
	}
	if got := c.Header.Get("Authorization"); got != "Bearer "+runtest.TestToken {
		t.Errorf("Authorization = %q, want Bearer <token>", got)
	}
	if got := c.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	f.WaitReady("web", "True")
}

// 1b. Any header other than Authorization carries the raw token.
func TestCustomAuthHeaderGetsRawToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Header: "X-Api-Key"}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	c := ep.Next(t)
	if got := c.Header.Get("X-Api-Key"); got != runtest.TestToken {
		t.Errorf("X-Api-Key = %q, want the raw token", got)
	}
	if got := c.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none when auth.header is X-Api-Key", got)
	}
	args, _ := c.Body["args"].(map[string]any)
	if v, present := args["logLevel"]; !present || v != nil {
		t.Errorf("args.logLevel = %#v (present %v), want null for a CR without spec.logLevel", v, present)
	}
}

// 9. A spec change sends the new object; a delete sends deleting: true.
func TestUpdateAndDeleteAreSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1, "logLevel": "info"})
	f.WaitReady("web", "True")

	f.PatchSpec("web", `{"spec":{"logLevel":"warn"}}`)
	c := ep.NextMatching(t, "with trigger update", func(c call) bool { return c.Trigger == "update" })
	if lvl, _, _ := unstructured.NestedString(c.Body, "object", "spec", "logLevel"); lvl != "warn" {
		t.Errorf("object.spec.logLevel = %q after the update, want warn", lvl)
	}
	if args, _ := c.Body["args"].(map[string]any); args["logLevel"] != "warn" {
		t.Errorf("args.logLevel = %v, want warn", args["logLevel"])
	}
	if gen, _, _ := unstructured.NestedFloat64(c.Body, "prepared", "generation"); gen != 2 {
		t.Errorf("prepared.generation = %v, want 2", gen)
	}

	if err := f.Dyn.Resource(f.GVR).Namespace(f.NS).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c = ep.NextMatching(t, "with trigger delete", func(c call) bool { return c.Trigger == "delete" })
	if deleting, _, _ := unstructured.NestedBool(c.Body, "prepared", "deleting"); !deleting {
		t.Errorf("prepared.deleting = false on delete, want true")
	}
}

// 12. A rotated token is used on the next call, without restarting ork.
func TestRotatedTokenIsUsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil, func(o *run.Options) { o.SecretTTL = 200 * time.Millisecond })
	f.CreateCR("web", map[string]any{"replicas": 1})
	if got := ep.Next(t).Header.Get("Authorization"); got != "Bearer "+runtest.TestToken {
		t.Fatalf("first call Authorization = %q", got)
	}
	f.WaitReady("web", "True")

	secrets := env.Clientset.CoreV1().Secrets(f.NS)
	sec, err := secrets.Get(t.Context(), "reconciler-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"token": []byte("rotated-token")}
	if _, err := secrets.Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Secrets are read again once their short cache expires (SecretTTL: 200ms here, 5s by
	// default): a change of the CR after that carries the new token.
	replicas := 2
	f.Eventually("a call with the rotated token", func() (bool, error) {
		f.PatchSpec("web", fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
		replicas++
		c := ep.NextMatching(t, "after the rotation", func(c call) bool { return c.Trigger == "update" })
		return c.Header.Get("Authorization") == "Bearer rotated-token", nil
	})
}

// 11. With payload.children.enabled the owned children are sent, minus the exclude paths.
func TestChildrenPayload(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: `              object:
                exclude: [metadata.annotations]
              children:
                enabled: true
                exclude: [metadata.labels, status]
`}), nil)
	f.CreateCR("web", map[string]any{"replicas": 1})
	f.WaitReady("web", "True")
	// ork's own applies coming back cost no call: the next call is the CR's next change.
	f.PatchSpec("web", `{"spec":{"replicas":2}}`)
	c := ep.NextMatching(t, "listing both children", func(c call) bool {
		d, _, _ := unstructured.NestedMap(c.Body, "prepared", "children", "deployment")
		s, _, _ := unstructured.NestedMap(c.Body, "prepared", "children", "service")
		return d["web"] != nil && s["web-svc"] != nil
	})
	dep, _, _ := unstructured.NestedMap(c.Body, "prepared", "children", "deployment", "web")
	if _, found, _ := unstructured.NestedFieldNoCopy(dep, "metadata", "labels"); found {
		t.Error("children.deployment.web.metadata.labels sent although children.exclude lists it")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(dep, "status"); found {
		t.Error("children.deployment.web.status sent although children.exclude lists it")
	}
	if cs, _, _ := unstructured.NestedSlice(dep, "spec", "template", "spec", "containers"); len(cs) != 1 {
		t.Errorf("children.deployment.web.spec.template.spec.containers = %v, want the one container", cs)
	}
	first, _, _ := unstructured.NestedMap(c.Body, "prepared", "children")
	if len(first) != 2 {
		t.Errorf("prepared.children has types %v, want exactly deployment and service", first)
	}
}
