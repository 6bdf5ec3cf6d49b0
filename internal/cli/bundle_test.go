package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/katalog"
)

// The bundle's container ports and probes assume ork run's default --metrics-addr and
// --health-addr, which it leaves unset (so ORK_* settings can still move them).
func TestBundlePortsAreRunDefaults(t *testing.T) {
	root := NewRootCmd(&Env{Getenv: func(string) string { return "" }})
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flag string
		port int
	}{
		{"metrics-addr", bundle.MetricsPort},
		{"health-addr", bundle.HealthPort},
	}
	for _, tt := range tests {
		got := run.Flags().Lookup(tt.flag).DefValue
		want := fmt.Sprintf(":%d", tt.port)
		if got != want {
			t.Errorf("ork run --%s defaults to %q, the bundle assumes %q", tt.flag, got, want)
		}
	}
}

// The port-forward the docs and ork trace's help show names the Deployment ork bundle
// writes for the example Katalog (named after its metadata.name).
func TestDocumentedPortForwardNamesTheBundlesDeployment(t *testing.T) {
	set, _, err := katalog.Load([]string{"../../examples/remote/katalog.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	name, err := bundle.DefaultName(set)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Generate(set, bundle.Options{Name: name, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	var deployment string
	for _, o := range b.Objects {
		if o.GetKind() == "Deployment" {
			deployment = o.GetNamespace() + " port-forward deploy/" + o.GetName() + " "
		}
	}
	docs, err := os.ReadFile("../../docs/remote-reconciler.md")
	if err != nil {
		t.Fatal(err)
	}
	trace := newTraceCmd(&Env{}).Example
	for where, text := range map[string]string{"docs/remote-reconciler.md": string(docs), "ork trace --help": trace} {
		if !strings.Contains(text, "kubectl -n "+deployment) {
			t.Errorf("%s does not port-forward to the bundle's Deployment (kubectl -n %s...)", where, deployment)
		}
	}
}
