package remotecheck

import (
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
)

// ork remote check sends payload.related from the objects it is given and reports what each
// entry resolved to.
func TestRelatedObjectsAreSentAndReported(t *testing.T) {
	seen := make(chan any, 16)
	srv := httptest.NewServer(reconciler(func(req, _ map[string]any) {
		seen <- req["prepared"].(map[string]any)["related"]
	}))
	t.Cleanup(srv.Close)
	set, opts := example(t)
	opts.Endpoint = srv.URL
	set.CRD("webapp").OperatorBox.Reconcile.Remote.Payload.Related = []katalog.Related{
		{As: "config", Kind: "ConfigMap", Name: "{{ .metadata.name }}-config"},
		{As: "absent", Kind: "ConfigMap", Name: "nothing", Required: true},
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": opts.CR.GetName() + "-config", "namespace": "default"}, "data": map[string]any{"k": "v"}}}
	opts.Objects = []*unstructured.Unstructured{cm}
	rep, err := Run(t.Context(), set, opts)
	if err != nil {
		t.Fatal(err)
	}
	close(seen)
	for rel := range seen {
		m, _ := rel.(map[string]any)
		if cfg, _ := m["config"].([]any); len(cfg) != 1 {
			t.Errorf("prepared.related = %v, want the ConfigMap under config", rel)
		}
	}
	if got := strings.Join(rep.Related, "; "); !strings.Contains(got, "config: configmaps default/"+cm.GetName()+" (1)") {
		t.Errorf("Report.Related = %q, want config resolved to %s with one object", got, cm.GetName())
	}
	if len(rep.MissingRelated) != 1 || !strings.Contains(rep.MissingRelated[0], "absent") {
		t.Errorf("Report.MissingRelated = %v, want absent", rep.MissingRelated)
	}
}
