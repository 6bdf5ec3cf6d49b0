package apiwarnings

import (
	"context"
	"slices"
	"testing"
)

func TestUnknownFieldWarningsNameTheTopLevelKeysPruned(t *testing.T) {
	for _, tc := range []struct {
		name     string
		warnings []string
		want     []string
	}{
		{"top-level keys", []string{`unknown field "status.conditions"`, `unknown field "status.extra"`}, []string{"conditions", "extra"}},
		{"a field inside a kept key", []string{`unknown field "status.conditions[0].lastProbeTime"`, `unknown field "status.info.x"`}, nil},
		{"another prefix", []string{`unknown field "spec.x"`}, nil},
		{"another warning", []string{`metadata.finalizers: "x": prefer a domain-qualified finalizer name`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, w := Collect(context.Background())
			r := Router{fallback: failingHandler{t}}
			for _, text := range tc.warnings {
				r.HandleWarningHeaderWithContext(ctx, 299, "-", text)
			}
			if got := w.UnknownFields("status"); !slices.Equal(got, tc.want) {
				t.Errorf("UnknownFields = %q, want %q", got, tc.want)
			}
		})
	}
}

// A warning of a request that collects none goes where it went before.
func TestWarningsOfOtherRequestsGoToTheFallback(t *testing.T) {
	var got []string
	r := Router{fallback: recordingHandler{&got}}
	r.HandleWarningHeaderWithContext(context.Background(), 299, "-", "deprecated")
	if !slices.Equal(got, []string{"deprecated"}) {
		t.Errorf("fallback got %q, want the warning", got)
	}
}

type failingHandler struct{ t *testing.T }

func (f failingHandler) HandleWarningHeaderWithContext(_ context.Context, _ int, _, text string) {
	f.t.Errorf("warning %q of a collecting request reached the fallback", text)
}

type recordingHandler struct{ got *[]string }

func (r recordingHandler) HandleWarningHeaderWithContext(_ context.Context, _ int, _, text string) {
	*r.got = append(*r.got, text)
}
