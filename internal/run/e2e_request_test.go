package run_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run"
)

// 1. A created CR reaches the endpoint as the seed's PreparedRequest.
func TestCreateSendsPreparedRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(call) response { return jsonResponse(map[string]any{"result": "ok"}) })
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"replicas": 3, "logLevel": "debug", "secretNote": "do not send"})

	c := ep.next(t)
	if got := c.body["key"]; got != f.ns+"/web" {
		t.Errorf("key = %v, want %s/web", got, f.ns)
	}
	gvk, _ := c.body["gvk"].(map[string]any)
	if gvk["Group"] != f.group || gvk["Version"] != "v1" || gvk["Kind"] != "App" {
		t.Errorf("gvk = %v, want capitalised Group/Version/Kind of the CR", gvk)
	}
	obj, _ := c.body["object"].(map[string]any)
	if _, found, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "annotations"); found {
		t.Error("object.metadata.annotations was sent although payload.object.exclude lists it")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "secretNote"); found {
		t.Error("object.spec.secretNote was sent although payload.object.exclude lists it")
	}
	if name, _, _ := unstructured.NestedString(obj, "metadata", "name"); name != "web" {
		t.Errorf("object.metadata.name = %q, want web", name)
	}
	args, _ := c.body["args"].(map[string]any)
	if args["replicas"] != float64(3) {
		t.Errorf("args.replicas = %#v, want the JSON number 3 (rendered and coerced)", args["replicas"])
	}
	if args["logLevel"] != "debug" {
		t.Errorf("args.logLevel = %#v, want debug", args["logLevel"])
	}
	prepared, _ := c.body["prepared"].(map[string]any)
	if prepared["trigger"] != "create" || prepared["attempt"] != float64(1) || prepared["deleting"] != false ||
		prepared["generation"] != float64(1) {
		t.Errorf("prepared = %v, want trigger create, attempt 1, generation 1, deleting false", prepared)
	}
	if got := c.header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization = %q, want Bearer <token>", got)
	}
	if got := c.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	f.waitReady("web", "True")
}

// 1b. Any header other than Authorization carries the raw token.
func TestCustomAuthHeaderGetsRawToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(call) response { return jsonResponse(map[string]any{"result": "ok"}) })
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, header: "X-Api-Key"}), nil)
	f.createCR("web", map[string]any{"replicas": 1})
	c := ep.next(t)
	if got := c.header.Get("X-Api-Key"); got != testToken {
		t.Errorf("X-Api-Key = %q, want the raw token", got)
	}
	if got := c.header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none when auth.header is X-Api-Key", got)
	}
	args, _ := c.body["args"].(map[string]any)
	if v, present := args["logLevel"]; !present || v != nil {
		t.Errorf("args.logLevel = %#v (present %v), want null for a CR without spec.logLevel", v, present)
	}
}

// 9. A spec change sends the new object; a delete sends deleting: true.
func TestUpdateAndDeleteAreSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"replicas": 1, "logLevel": "info"})
	f.waitReady("web", "True")

	f.patchSpec("web", `{"spec":{"logLevel":"warn"}}`)
	c := ep.nextMatching(t, "with trigger update", func(c call) bool { return c.trigger() == "update" })
	if lvl, _, _ := unstructured.NestedString(c.body, "object", "spec", "logLevel"); lvl != "warn" {
		t.Errorf("object.spec.logLevel = %q after the update, want warn", lvl)
	}
	if args, _ := c.body["args"].(map[string]any); args["logLevel"] != "warn" {
		t.Errorf("args.logLevel = %v, want warn", args["logLevel"])
	}
	if gen, _, _ := unstructured.NestedFloat64(c.body, "prepared", "generation"); gen != 2 {
		t.Errorf("prepared.generation = %v, want 2", gen)
	}

	if err := f.dyn.Resource(f.gvr).Namespace(f.ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c = ep.nextMatching(t, "with trigger delete", func(c call) bool { return c.trigger() == "delete" })
	if deleting, _, _ := unstructured.NestedBool(c.body, "prepared", "deleting"); !deleting {
		t.Errorf("prepared.deleting = false on delete, want true")
	}
}

// 12. A rotated token is used on the next call, without restarting ork.
func TestRotatedTokenIsUsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(call) response { return jsonResponse(map[string]any{"result": "ok"}) })
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil, func(o *run.Options) { o.SecretTTL = 200 * time.Millisecond })
	f.createCR("web", map[string]any{"replicas": 1})
	if got := ep.next(t).header.Get("Authorization"); got != "Bearer "+testToken {
		t.Fatalf("first call Authorization = %q", got)
	}
	f.waitReady("web", "True")

	secrets := env.Clientset.CoreV1().Secrets(f.ns)
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
	f.eventually("a call with the rotated token", func() (bool, error) {
		f.patchSpec("web", fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
		replicas++
		c := ep.nextMatching(t, "after the rotation", func(c call) bool { return c.trigger() == "update" })
		return c.header.Get("Authorization") == "Bearer rotated-token", nil
	})
}

// 11. With payload.children.enabled the owned children are sent, minus the exclude paths.
func TestChildrenPayload(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, payload: `              object:
                exclude: [metadata.annotations]
              children:
                enabled: true
                exclude: [metadata.labels, status]
`}), nil)
	f.createCR("web", map[string]any{"replicas": 1})
	f.waitReady("web", "True")
	// ork's own applies coming back cost no call: the next call is the CR's next change.
	f.patchSpec("web", `{"spec":{"replicas":2}}`)
	c := ep.nextMatching(t, "listing both children", func(c call) bool {
		d, _, _ := unstructured.NestedMap(c.body, "prepared", "children", "deployment")
		s, _, _ := unstructured.NestedMap(c.body, "prepared", "children", "service")
		return d["web"] != nil && s["web-svc"] != nil
	})
	dep, _, _ := unstructured.NestedMap(c.body, "prepared", "children", "deployment", "web")
	if _, found, _ := unstructured.NestedFieldNoCopy(dep, "metadata", "labels"); found {
		t.Error("children.deployment.web.metadata.labels sent although children.exclude lists it")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(dep, "status"); found {
		t.Error("children.deployment.web.status sent although children.exclude lists it")
	}
	if cs, _, _ := unstructured.NestedSlice(dep, "spec", "template", "spec", "containers"); len(cs) != 1 {
		t.Errorf("children.deployment.web.spec.template.spec.containers = %v, want the one container", cs)
	}
	first, _, _ := unstructured.NestedMap(c.body, "prepared", "children")
	if len(first) != 2 {
		t.Errorf("prepared.children has types %v, want exactly deployment and service", first)
	}
}
