package run

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
)

func TestNewRefusesWhatAShardedRingCannotRun(t *testing.T) {
	plain := &katalog.Set{CRDs: []*katalog.CRD{{Name: "app", OperatorBox: katalog.OperatorBox{
		Reconcile: katalog.Reconcile{Remote: &katalog.Remote{Endpoint: "http://127.0.0.1:1"}}}}}}
	canary := &katalog.Set{CRDs: []*katalog.CRD{{Name: "app", OperatorBox: katalog.OperatorBox{
		Reconcile: katalog.Reconcile{Remote: &katalog.Remote{Endpoint: "http://127.0.0.1:1", Candidate: &katalog.Candidate{}}}}}}}
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	tests := []struct {
		name string
		set  *katalog.Set
		opts Options
		want string // "" for no error
	}{
		{"a power of two", plain, Options{ShardBuckets: 8}, ""},
		{"not a power of two", plain, Options{ShardBuckets: 12}, "want a power of two from 2 to 256"},
		{"above 256", plain, Options{ShardBuckets: 512}, "want a power of two from 2 to 256"},
		{"with leader election", plain, Options{ShardBuckets: 8, LeaderElect: true}, "not with leader election"},
		{"in a dry run", plain, Options{ShardBuckets: 8, DryRun: true}, "nor in a dry run"},
		{"a candidate rollout", canary, Options{ShardBuckets: 8}, "candidate is not rolled out by sharded replicas"},
		{"a candidate rollout, single leader", canary, Options{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.RESTConfig, tt.opts.ShardMember = cfg, "pod-0"
			_, err := New(tt.set, tt.opts)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
