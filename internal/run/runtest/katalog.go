package runtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// RemoteSpec is the part of the fixture's Katalog a test varies.
type RemoteSpec struct {
	Endpoint string
	// Extra is YAML appended under reconcile.remote (indented by the caller to 12 spaces).
	Extra string
	// Managed lists "group/plural" entries; default apps/deployments and /services.
	Managed []string
	// Header carries the token; default Authorization.
	Header string
	// Timeout is remote.timeout; default 10s.
	Timeout string
	// Payload is the YAML under remote.payload (12 spaces indented); default excludes
	// metadata.annotations and spec.secretNote from the object.
	Payload string
	// CRDFile replaces apiTypes with a crdFile (a path relative to the fixture's dir).
	CRDFile string
	// SecretNamespace is the auth secretRef's namespace; default the fixture's, "-" leaves
	// it out (ork's own namespace applies).
	SecretNamespace string
	// Resync is reconcile.resync; default none.
	Resync string
}

// LoadKatalog writes doc as the fixture's Katalog and loads it, failing on any finding.
func (f *Fixture) LoadKatalog(doc string) *katalog.Set {
	f.T.Helper()
	path := filepath.Join(f.Dir, "katalog.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		f.T.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{path})
	if err != nil || katalog.HasErrors(findings) {
		f.T.Fatalf("Katalog does not load: %v %+v", err, findings)
	}
	return set
}

// WriteKatalog writes the Katalog for one remote CRD "app", the fixture's App, and loads it.
func (f *Fixture) WriteKatalog(rs RemoteSpec) *katalog.Set {
	f.T.Helper()
	managed := rs.Managed
	if managed == nil {
		managed = []string{"apps/deployments", "/services"}
	}
	var mr strings.Builder
	for _, m := range managed {
		g, p, _ := strings.Cut(m, "/")
		fmt.Fprintf(&mr, "              - group: %q\n                plural: %s\n", g, p)
	}
	header := rs.Header
	if header == "" {
		header = "Authorization"
	}
	timeout := rs.Timeout
	if timeout == "" {
		timeout = "10s"
	}
	payload := rs.Payload
	if payload == "" {
		payload = "              object:\n                exclude: [metadata.annotations, spec.secretNote]\n"
	}
	secretNS := ", namespace: " + f.NS
	switch rs.SecretNamespace {
	case "-":
		secretNS = ""
	case "":
	default:
		secretNS = ", namespace: " + rs.SecretNamespace
	}
	resync := ""
	if rs.Resync != "" {
		resync = "\n          resync: " + rs.Resync
	}
	types := fmt.Sprintf("apiTypes: {group: %s, version: v1, kind: App, plural: apps}", f.Group)
	if f.Cluster {
		types += "\n      namespaced: false"
	}
	if rs.CRDFile != "" {
		types = fmt.Sprintf("crdFile: %q", rs.CRDFile)
	}
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: e2e}
spec:
  crds:
    app:
      %s
      operatorBox:
        reconcile:
          default: false
          workers: 2%s
          remote:
            endpoint: %q
            timeout: %s
            args:
              replicas: "{{ .spec.replicas }}"
              logLevel: "{{ .spec.logLevel }}"
            payload:
%s            managedResources:
%s            auth:
              secretRef: {name: reconciler-token%s, key: token}
              header: %q
%s`, types, resync, rs.Endpoint, timeout, payload, mr.String(), secretNS, header, rs.Extra)
	f.Katalog = filepath.Join(f.Dir, "katalog.yaml")
	if err := os.WriteFile(f.Katalog, []byte(doc), 0o600); err != nil {
		f.T.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{f.Katalog})
	if err != nil || katalog.HasErrors(findings) {
		f.T.Fatalf("test Katalog does not load: %v %+v\n%s", err, findings, doc)
	}
	return set
}
