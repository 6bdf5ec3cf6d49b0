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

// The completion callback is all or nothing: New refuses a URL without a listener or a key,
// a URL reconcilers could not POST to, a Secret name that cannot be one.
func TestNewChecksTheCallbackOptions(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	full := run.Options{RESTConfig: cfg, OperationCallbackURL: "https://ork.ops.svc:8082", OperationCallbackAddr: ":8082", OperationCallbackSecret: "op-callback"}
	tests := []struct {
		name string
		edit func(*run.Options)
		want string
	}{
		{"none", func(o *run.Options) { *o = run.Options{RESTConfig: cfg} }, ""},
		{"all three", func(*run.Options) {}, ""},
		{"a URL without a listener", func(o *run.Options) { o.OperationCallbackAddr = "" }, "together"},
		{"no Secret", func(o *run.Options) { o.OperationCallbackSecret = "" }, "together"},
		{"a relative URL", func(o *run.Options) { o.OperationCallbackURL = "/cb" }, "absolute"},
		{"a URL with a query", func(o *run.Options) { o.OperationCallbackURL = "http://ork?x=1" }, "absolute"},
		{"a bad Secret name", func(o *run.Options) { o.OperationCallbackSecret = "Op_Callback" }, "Secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := full
			tt.edit(&o)
			_, err := run.New(&katalog.Set{}, o)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
