package run_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/orkspace/ork/internal/run/runtest"
)

// An endpoint template that reads a field a custom resource lacks fails that CR's reconcile
// with a Ready condition that says so in words (the field, and how to read it when optional),
// never Go's "map has no entry for key"; a CR that has the field is reconciled.
func TestEndpointTemplateMissingFieldInWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL() + "/{{ .spec.region }}"}), nil)
	f.CreateCR("noregion", map[string]any{})
	f.CreateCR("withregion", map[string]any{"region": "eu"})

	f.WaitReady("withregion", "True")
	want := `TemplateError: render endpoint: template reads .spec.region, which the custom resource lacks ` +
		`(outside remote.args a missing field fails the render; read an optional one with {{ index .spec "region" | default "…" }})`
	f.Eventually("noregion: Ready=False saying which field it lacks", func() (bool, error) {
		got, err := f.Get(f.GVR, "noregion")
		if err != nil {
			return false, err
		}
		c := runtest.ReadyCondition(got)
		if msg, _ := c["message"].(string); c == nil || c["status"] != "False" || msg != want {
			return false, fmt.Errorf("Ready condition %v", c) // shown if it never comes
		}
		return true, nil
	})
	got, err := f.Get(f.GVR, "noregion")
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := runtest.ReadyCondition(got)["message"].(string); strings.Contains(msg, "no entry for key") {
		t.Errorf("condition message keeps Go's words: %q", msg)
	}
	f.WaitEvent("noregion", corev1.EventTypeWarning, "ReconcileError")
}
