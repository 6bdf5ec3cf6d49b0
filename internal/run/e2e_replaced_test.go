package run_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/run/runtest"
)

func callUID(c call) string {
	uid, _, _ := unstructured.NestedString(c.Body, "object", "metadata", "uid")
	return uid
}

// A CR deleted and created again under its name while its call runs: the old incarnation's
// answer is applied to nothing. Its children would carry the dead uid as their controller
// (and be garbage-collected, or block the new incarnation's own child of that name).
func TestChildrenAreNotWrittenForACRReplacedDuringTheCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	held, release := make(chan string, 1), make(chan struct{})
	ep := runtest.NewEndpoint(t, func(c call) response {
		if c.CRName() == "web" {
			select {
			case held <- callUID(c): // the first incarnation's call: hold it
				select {
				case <-release:
				case <-c.Ctx.Done():
				}
				return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
					map[string]any{"type": "service", "fields": map[string]any{"name": "web-old", "port": 80}},
				}})
			default:
			}
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "1m"}), nil)
	f.CreateCR("web", map[string]any{})
	old := <-held
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := f.CreateCR("web", map[string]any{})
	// The CRs' events come in order on one watch: once the canary's call arrives (at the
	// second worker), ork's cache holds the new web.
	f.CreateCR("canary", map[string]any{})
	ep.NextMatching(t, "for the canary", func(c call) bool { return c.CRName() == "canary" })
	close(release)
	// One key, one worker at a time: once the new incarnation's call arrives, the old one's
	// pass is over.
	ep.NextMatching(t, "for the new incarnation", func(c call) bool { return callUID(c) == string(fresh.GetUID()) })
	if svc, err := f.Get(runtest.Services, "web-old"); err == nil {
		t.Errorf("service web-old was applied for the replaced CR (controller %v, the old incarnation is %s)", metav1.GetControllerOf(svc), old)
	}
}
