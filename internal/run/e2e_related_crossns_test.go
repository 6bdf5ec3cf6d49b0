package run_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// A type whose only entry names a constant namespace other than the CR's is watched there
// alone: the generated RBAC grants list and watch by a Role in that namespace only, and ork
// starts under it, sends the object, and passes the CR again when it changes.
func TestRelatedConstantCrossNamespaceUnderGeneratedRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	shared := env.Namespace(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	payload := fmt.Sprintf(`              related:
                - {as: settings, kind: ConfigMap, namespace: %s, name: settings, allowCrossNamespace: true, required: true}
`, shared)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: payload})
	name := "ork-" + f.NS
	f.GrantGeneratedRBAC(set, name)
	if allowed(t, f.NS, name, "list", "configmaps") {
		t.Fatal("the generated role lists configmaps in the CR's namespace: the test would not show the watch's scope")
	}

	cms := env.Clientset.CoreV1().ConfigMaps(shared)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Start(set, env.ServiceAccountConfig(f.NS, name), func(o *run.Options) {
		o.ChildMinInterval = 100 * time.Millisecond
		o.CacheSyncTimeout = 20 * time.Second
	})
	f.CreateCR("web", map[string]any{})
	ep.NextMatching(t, "a call for web with the shared settings", func(c call) bool {
		rel, _ := relatedOf(t, c)
		return c.CRName() == "web" && len(rel["settings"]) == 1 && rel["settings"][0]["data"].(map[string]any)["v"] == "1"
	})
	if _, err := cms.Patch(t.Context(), "settings", types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "web passed again for the edit of the shared settings", func(c call) bool {
		rel, _ := relatedOf(t, c)
		return c.CRName() == "web" && len(rel["settings"]) == 1 && rel["settings"][0]["data"].(map[string]any)["v"] == "2"
	})
}
