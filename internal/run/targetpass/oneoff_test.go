package targetpass

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/target"
)

// A kept sweep client goes with the last CR that keeps it, when that CR is forgotten (its
// bucket handed back, or it is gone); not while another CR still keeps it, and not after
// the sweep that kept it is done.
func TestOneOffsGoWithTheirCRs(t *testing.T) {
	east, west := target.Ref{Namespace: "ops", Name: "east"}, target.Ref{Namespace: "ops", Name: "west"}
	var o oneOffs
	o.keep("ns/a", "uid-a", east)
	o.keep("ns/b", "uid-b", east)
	o.keep("ns/b", "uid-b", west)
	o.keep("ns/c", "uid-c", west)
	o.done("ns/c", "uid-c", west)
	only := func(keys ...string) func(string, types.UID) bool {
		return func(key string, _ types.UID) bool { return slices.Contains(keys, key) }
	}
	if got := o.forget(only("ns/a")); len(got) != 0 {
		t.Errorf("forgetting ns/a drops %v; ns/b still keeps east", got)
	}
	if got := o.forget(only("ns/b")); !slices.Equal(sorted(got), []target.Ref{east, west}) {
		t.Errorf("forgetting ns/b drops %v, want east and west", got)
	}
	if len(o.kept) != 0 {
		t.Errorf("notes left: %v", o.kept)
	}
	// A CR replaced under its key (another uid) is another CR: forgetting the old one
	// leaves the new one's notes.
	o.keep("ns/a", "uid-a", east)
	o.keep("ns/a", "uid-a2", west)
	oldOnly := func(key string, uid types.UID) bool { return key == "ns/a" && uid == "uid-a" }
	if got := o.forget(oldOnly); !slices.Equal(got, []target.Ref{east}) {
		t.Errorf("forgetting the replaced CR drops %v, want east alone", got)
	}
	if got := o.forget(only("ns/a")); !slices.Equal(got, []target.Ref{west}) {
		t.Errorf("forgetting the new CR drops %v, want west", got)
	}
}

func sorted(refs []target.Ref) []target.Ref {
	return slices.SortedFunc(slices.Values(refs), func(a, b target.Ref) int {
		if a.String() < b.String() {
			return -1
		}
		if a.String() > b.String() {
			return 1
		}
		return 0
	})
}
