package candidate

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/remote"
)

// A released bucket's CRs are forgotten, and only they: their warned pins, their logged
// divergences and their waiting shadow calls.
func TestForgetObjectsDropsOnlyTheGoneCRs(t *testing.T) {
	c := &Candidate{badPins: map[types.UID]bool{}, logged: map[string]loggedPaths{}, waiting: map[string]shadowJob{}}
	for _, cr := range []struct {
		key string
		uid types.UID
	}{{"ns/gone", "u-gone"}, {"ns/kept", "u-kept"}} {
		c.badPins[cr.uid] = true
		c.logged[cr.key] = loggedPaths{uid: cr.uid, paths: "spec.replicas"}
		c.waiting[cr.key] = shadowJob{req: remote.Request{Key: cr.key, Object: map[string]any{"metadata": map[string]any{"uid": string(cr.uid)}}}}
		c.order = append(c.order, cr.key)
	}
	c.ForgetObjects(func(uid types.UID) bool { return uid == "u-gone" })

	for _, tc := range []struct {
		what       string
		gone, kept bool
	}{
		{"warned pin", c.badPins["u-gone"], c.badPins["u-kept"]},
		{"divergence log", c.logged["ns/gone"].uid != "", c.logged["ns/kept"].uid != ""},
		{"waiting shadow call", slices.Contains(c.order, "ns/gone"), slices.Contains(c.order, "ns/kept") && c.waiting["ns/kept"].req.Key != ""},
	} {
		if tc.gone || !tc.kept {
			t.Errorf("%s: forgotten CR remembered = %v, other CR remembered = %v; want false, true", tc.what, tc.gone, tc.kept)
		}
	}
}
