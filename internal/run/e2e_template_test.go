package run_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// An endpoint template that reads a field a custom resource lacks fails that CR's reconcile
// with a Ready condition that says so in words (the field, and how to read it when optional),
// never Go's "map has no entry for key"; a CR that has the field is reconciled.
func TestEndpointTemplateMissingFieldInWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL + "/{{ .spec.region }}"}), nil)
	f.createCR("noregion", map[string]any{})
	f.createCR("withregion", map[string]any{"region": "eu"})

	f.waitReady("withregion", "True")
	want := `TemplateError: render endpoint: template reads .spec.region, which the custom resource lacks ` +
		`(outside remote.args a missing field fails the render; read an optional one with {{ index .spec "region" | default "…" }})`
	f.eventually("noregion: Ready=False saying which field it lacks", func() (bool, error) {
		got, err := f.get(f.gvr, "noregion")
		if err != nil {
			return false, err
		}
		c := readyCondition(got)
		if msg, _ := c["message"].(string); c == nil || c["status"] != "False" || msg != want {
			return false, fmt.Errorf("Ready condition %v", c) // shown if it never comes
		}
		return true, nil
	})
	got, err := f.get(f.gvr, "noregion")
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := readyCondition(got)["message"].(string); strings.Contains(msg, "no entry for key") {
		t.Errorf("condition message keeps Go's words: %q", msg)
	}
	f.waitEvent("noregion", corev1.EventTypeWarning, "ReconcileError")
}
