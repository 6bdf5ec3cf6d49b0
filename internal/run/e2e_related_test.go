package run_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// relatedOf is a request's prepared.related; ok is false when it is absent.
func relatedOf(t *testing.T, c call) (map[string][]map[string]any, bool) {
	t.Helper()
	var body struct {
		Prepared struct {
			Related map[string][]map[string]any `json:"related"`
		} `json:"prepared"`
	}
	if err := json.Unmarshal(c.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Prepared.Related, body.Prepared.Related != nil
}

// payload.related end to end, with ork under the RBAC of `ork rbac gen` alone: a required
// ConfigMap by a templated name holds the call back until it exists, is sent in
// prepared.related, and its change passes again exactly the CR that read it; a status-only
// change of a related custom resource passes nobody (two CRs reading each other never loop).
func TestRelatedObjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	payload := fmt.Sprintf(`              related:
                - {as: config, kind: ConfigMap, name: "{{ .metadata.name }}-config", required: true}
                - {as: peer, group: %s, kind: App, name: "{{ .spec.peer }}"}
`, f.Group)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: payload})
	name := "ork-" + f.NS
	f.GrantGeneratedRBAC(set, name)
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		if allowed(t, f.NS, name, verb, "configmaps") {
			t.Errorf("the generated role allows %s on configmaps, a related type only read", verb)
		}
	}

	cms := env.Clientset.CoreV1().ConfigMaps(f.NS)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-config"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Start(set, env.ServiceAccountConfig(f.NS, name), func(o *run.Options) { o.ChildMinInterval = 100 * time.Millisecond })
	f.CreateCR("other", map[string]any{"peer": "web"})
	f.CreateCR("web", map[string]any{"peer": "other"})

	// web's ConfigMap is missing: no call for web, the reason names it.
	cr := f.WaitReady("web", "False")
	if c := runtest.ReadyCondition(cr); c["reason"] != run.ReasonRelatedObjectMissing || !strings.Contains(fmt.Sprint(c["message"]), "web-config") {
		t.Errorf("Ready of web: %v, want reason %s naming web-config", c, run.ReasonRelatedObjectMissing)
	}
	first := ep.NextMatching(t, "a call for other", func(c call) bool { return c.CRName() == "other" })
	rel, ok := relatedOf(t, first)
	if !ok || len(rel["config"]) != 1 || rel["peer"] == nil {
		t.Fatalf("other's prepared.related = %v, want its ConfigMap and the key peer", rel)
	}
	if data, _ := rel["config"][0]["data"].(map[string]any); data["v"] != "1" {
		t.Errorf("other's config = %v, want other-config's data", rel["config"][0])
	}
	if _, has := rel["config"][0]["metadata"].(map[string]any)["managedFields"]; has {
		t.Error("a related object is sent with its managedFields")
	}
	// web's creation passes other again (it names web as its peer), now with web in it;
	// unless web was already in the cache when other's first pass read it (the two are
	// created back to back), and then no second pass is owed.
	if len(rel["peer"]) != 1 {
		ep.NextMatching(t, "a call for other with its peer", func(c call) bool {
			rel, _ := relatedOf(t, c)
			return c.CRName() == "other" && len(rel["peer"]) == 1
		})
	}
	for _, c := range ep.Recorded() {
		if c.CRName() == "web" {
			t.Fatalf("web was called while its required ConfigMap is missing: %s", c.Raw)
		}
	}

	// The ConfigMap appears: web converges, with it in the request.
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	webCall := ep.NextMatching(t, "a call for web", func(c call) bool { return c.CRName() == "web" })
	if rel, _ := relatedOf(t, webCall); len(rel["config"]) != 1 || rel["config"][0]["metadata"].(map[string]any)["name"] != "web-config" {
		t.Errorf("web's prepared.related = %v, want web-config", rel)
	}
	f.WaitReady("web", "True")
	f.WaitReady("other", "True")
	// When other's first pass already read web, web's add event may still pass other once
	// more (it is queued ChildMinInterval, 100ms, after other's last pass): let it come
	// before counting. Slack: 1s without a call is ten times that interval.
	quietFor(ep, time.Second)
	f.waitPassesDone(ep)

	// Editing web-config passes web again, once, and not other.
	before := len(ep.Recorded())
	if _, err := cms.Patch(t.Context(), "web-config", types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	edited := ep.NextMatching(t, "web's pass for the edit", func(c call) bool {
		rel, _ := relatedOf(t, c)
		return c.CRName() == "web" && len(rel["config"]) == 1 && rel["config"][0]["data"].(map[string]any)["v"] == "2"
	})
	if edited.Trigger != "resync" {
		t.Errorf("the pass for the edit has trigger %q, want resync (ork's own log says related)", edited.Trigger)
	}
	// A status-only change of web's peer passes nobody. Bound: the watch delivers in
	// milliseconds here and ChildMinInterval is 100ms, so a pass it caused would arrive well
	// within 2s.
	if _, err := f.CRs().Patch(t.Context(), "other", types.MergePatchType, []byte(`{"status":{"note":"x"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	drainFor(ep, 2*time.Second)
	var web, other int
	for _, c := range ep.Recorded()[before:] {
		switch c.CRName() {
		case "web":
			web++
		case "other":
			other++
		}
	}
	if web != 1 || other != 0 {
		t.Errorf("after the edit and a status-only change of the peer: %d calls for web, %d for other; want 1 and 0", web, other)
	}
	if strings.Contains(strings.ToLower(f.Logs.String()), "forbidden") {
		t.Errorf("ork logged a forbidden error under the generated role:\n%s", f.Logs.String())
	}
}

// allowed asks the apiserver whether the ServiceAccount may verb resource in namespace.
func allowed(t *testing.T, namespace, sa, verb, resource string) bool {
	t.Helper()
	r, err := env.Clientset.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + namespace + ":" + sa,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: resource},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

// drainFor consumes the calls arriving at ep for d.
func drainFor(ep *endpoint, d time.Duration) {
	end := time.After(d)
	for {
		select {
		case <-ep.Arrived():
		case <-end:
			return
		}
	}
}

// quietFor returns once no call has arrived at ep for d.
func quietFor(ep *endpoint, d time.Duration) {
	for {
		select {
		case <-ep.Arrived():
		case <-time.After(d):
			return
		}
	}
}
