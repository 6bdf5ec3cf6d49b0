package cli

import (
	"fmt"
	"testing"

	"github.com/orkspace/ork/internal/bundle"
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
