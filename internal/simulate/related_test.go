package simulate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// relatedKatalog reads web's ConfigMap as a required related object; cr is the CR file.
func relatedKatalog(t *testing.T, cr string) string {
	t.Helper()
	dir := t.TempDir()
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    webapp:
      apiTypes: {group: myorg.io, version: v1, kind: WebApp, plural: webapps}
      crFiles: [cr.yaml]
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "http://127.0.0.1:1/reconcile"
            managedResources: [{group: apps, plural: deployments}]
            payload:
              related:
                - {as: config, kind: ConfigMap, name: "{{ .metadata.name }}-config", required: true}
`
	for name, body := range map[string]string{"katalog.yaml": k, "cr.yaml": cr} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "katalog.yaml")
}

const relatedCR = `apiVersion: myorg.io/v1
kind: WebApp
metadata: {name: web, namespace: default}
spec: {}
`

// ork simulate takes related objects from the other documents of the CR file.
func TestRemoteSendsRelatedFromTheCRFile(t *testing.T) {
	url, rs := serve(t, func(int, map[string]any) string { return `{"result":"ok"}` })
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config, namespace: default}\ndata: {level: debug}\n"
	rep, err := Run(t.Context(), load(t, relatedKatalog(t, relatedCR+cm)), Options{Remote: &RemoteOptions{Endpoint: url}})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.CRDs[0].CRs[0].Err; e != "" {
		t.Fatalf("simulate failed: %s", e)
	}
	rel, _ := rs.all()[0]["prepared"].(map[string]any)["related"].(map[string]any)
	config, _ := rel["config"].([]any)
	if len(config) != 1 || config[0].(map[string]any)["data"].(map[string]any)["level"] != "debug" {
		t.Errorf("prepared.related = %v, want the CR file's web-config", rel)
	}
}

// A required related object the CR file lacks: no call, the reason names it.
func TestRemoteRequiredRelatedMissing(t *testing.T) {
	url, rs := serve(t, func(int, map[string]any) string { return `{"result":"ok"}` })
	rep, err := Run(t.Context(), load(t, relatedKatalog(t, relatedCR)), Options{Remote: &RemoteOptions{Endpoint: url}})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.CRDs[0].CRs[0].Err; !strings.Contains(e, "RelatedObjectMissing") || !strings.Contains(e, "default/web-config") {
		t.Errorf("err %q, want RelatedObjectMissing naming default/web-config", e)
	}
	if n := len(rs.all()); n != 0 {
		t.Errorf("%d calls, want none", n)
	}
}
