package run_test

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run"
)

// The operator's name is a label value the child caches select on and the default Lease
// name: New refuses one that is not a DNS-1123 label, before anything talks to a cluster.
func TestNewChecksTheOperatorName(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	for _, tt := range []struct {
		name, want string
	}{
		{"", ""}, // the default, orkestra
		{"team-a", ""},
		{"Team_A", `name "Team_A"`},
		{"a,b=c", `name "a,b=c"`},
	} {
		_, err := run.New(&katalog.Set{}, run.Options{RESTConfig: cfg, Name: tt.name})
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("New with name %q: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}
