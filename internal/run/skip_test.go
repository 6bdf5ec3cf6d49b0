package run

import (
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

// The configuration a record's children digest carries changes with what the reconciler is
// asked (its endpoint, its args templates), not with skipUnchanged's own maxAge or a rollout.
func TestSkipConfigChangesWithTheQuestionOnly(t *testing.T) {
	base := katalog.Remote{Endpoint: "https://a/reconcile", Args: map[string]any{"x": "{{ .spec.x }}"},
		SkipUnchanged: &katalog.SkipUnchanged{MaxAge: "1h"}}
	with := func(f func(*katalog.Remote)) *katalog.Remote { r := base; f(&r); return &r }
	for _, tc := range []struct {
		name string
		r    *katalog.Remote
		same bool
	}{
		{"another maxAge", with(func(r *katalog.Remote) { r.SkipUnchanged = &katalog.SkipUnchanged{MaxAge: "2h"} }), true},
		{"a candidate added", with(func(r *katalog.Remote) { r.Candidate = &katalog.Candidate{Mode: "shadow"} }), true},
		{"another endpoint", with(func(r *katalog.Remote) { r.Endpoint = "https://b/reconcile" }), false},
		{"other args", with(func(r *katalog.Remote) { r.Args = map[string]any{"x": "{{ .spec.y }}"} }), false},
	} {
		if got := skipConfig(tc.r) == skipConfig(&base); got != tc.same {
			t.Errorf("%s: same config digest %v, want %v", tc.name, got, tc.same)
		}
	}
	if skipConfig(&base) == "" {
		t.Error("no digest of the configuration")
	}
}
