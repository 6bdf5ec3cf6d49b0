package rollout

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/remote"
)

func uid(i int) types.UID {
	return types.UID(fmt.Sprintf("0b5e%04x-7c1d-4f5e-9a2b-%012x", i%0xffff, i))
}

func TestInCanaryGrowsAndCovers(t *testing.T) {
	const n = 10000
	prev := 0
	for _, pct := range []int{0, 5, 25, 50, 100} {
		in := 0
		for i := range n {
			if InCanary(uid(i), pct) {
				in++
				// Growing the slice never moves a CR back to stable.
				for _, larger := range []int{pct, 50, 100} {
					if larger >= pct && !InCanary(uid(i), larger) {
						t.Fatalf("uid %d in the slice at %d%% but not at %d%%", i, pct, larger)
					}
				}
			}
		}
		// Binomial spread: at n = 10,000 one standard deviation is at most 50 CRs; 300 is six.
		if want := n * pct / 100; in < want-300 || in > want+300 {
			t.Errorf("at %d%%: %d of %d CRs in the slice, want %d ± 300", pct, in, n, want)
		}
		if in < prev {
			t.Errorf("at %d%%: slice shrank from %d to %d", pct, prev, in)
		}
		prev = in
	}
	if prev != n {
		t.Errorf("at 100%%: %d of %d in the slice, want all", prev, n)
	}
}

// The slice is salted: it must not follow the sharding buckets (FNV-1a 64 of the bare uid),
// or a canary step would land on one replica's CRs only.
func TestInCanaryDoesNotFollowBuckets(t *testing.T) {
	const n = 10000
	inBucket0, canaryInBucket0 := 0, 0
	for i := range n {
		h := fnv.New64a()
		_, _ = h.Write([]byte(uid(i)))
		if h.Sum64()>>63 != 0 {
			continue // bucket 1 of 2
		}
		inBucket0++
		if InCanary(uid(i), 50) {
			canaryInBucket0++
		}
	}
	// About half of bucket 0 is in a 50% slice; 300 is more than six standard deviations.
	if d := canaryInBucket0 - inBucket0/2; d < -300 || d > 300 {
		t.Errorf("%d of bucket 0's %d CRs are in the 50%% slice: the slice follows the buckets", canaryInBucket0, inBucket0)
	}
}

func TestSideOf(t *testing.T) {
	var in, out types.UID
	for i := 0; in == "" || out == ""; i++ {
		if InCanary(uid(i), 5) {
			in = uid(i)
		} else {
			out = uid(i)
		}
	}
	tests := []struct {
		name    string
		uid     types.UID
		ann     map[string]string
		want    Side
		wantErr bool
	}{
		{"in slice", in, nil, Candidate, false},
		{"outside slice", out, nil, Stable, false},
		{"pinned stable inside slice", in, map[string]string{PinAnnotation: "stable"}, Stable, false},
		{"pinned candidate outside slice", out, map[string]string{PinAnnotation: "candidate"}, Candidate, false},
		{"bad pin is ignored and reported", out, map[string]string{PinAnnotation: "canary"}, Stable, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pinErr := SideOf(tt.uid, tt.ann, 5)
			if got != tt.want || pinErr != tt.wantErr {
				t.Errorf("SideOf = %s, %v; want %s, %v", got, pinErr, tt.want, tt.wantErr)
			}
		})
	}
}

func obj(kind, name string, spec map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "ns"}, "spec": spec}}
	return o
}

func TestDiff(t *testing.T) {
	dep := func(replicas any) *unstructured.Unstructured {
		return obj("Deployment", "web", map[string]any{"replicas": replicas, "template": map[string]any{"image": "a"}})
	}
	withDigest := func(o *unstructured.Unstructured, d string) *unstructured.Unstructured {
		o.SetAnnotations(map[string]string{naming.AppliedAnnotation: d})
		return o
	}
	tests := []struct {
		name      string
		stable    Answer
		candidate Answer
		want      []string
	}{
		{"same", Answer{Objects: []*unstructured.Unstructured{dep(int64(2))}}, Answer{Result: "ok", Objects: []*unstructured.Unstructured{dep(float64(2))}}, nil},
		{"one field", Answer{Objects: []*unstructured.Unstructured{dep(int64(2))}}, Answer{Objects: []*unstructured.Unstructured{dep(int64(3))}},
			[]string{"objects[apps/v1 Deployment ns/web].spec.replicas"}},
		{"digest alone is no divergence", Answer{Objects: []*unstructured.Unstructured{withDigest(dep(int64(2)), "x")}},
			Answer{Objects: []*unstructured.Unstructured{withDigest(dep(int64(2)), "y")}}, nil},
		{"object only on one side", Answer{}, Answer{Objects: []*unstructured.Unstructured{dep(int64(2))}},
			[]string{"objects[apps/v1 Deployment ns/web]"}},
		{"result, requeue and status", Answer{Status: map[string]any{"phase": "Ready", "a.b": 1}},
			Answer{Result: "requeue", RequeueAfter: time.Second, Status: map[string]any{"phase": "Pending", "a.b": 1}},
			[]string{"requeueAfter", "result", "status.phase"}},
		{"nil and empty status agree", Answer{Status: map[string]any{}}, Answer{}, nil},
		{"escaped key", Answer{Status: map[string]any{"a.b": 1}}, Answer{Status: map[string]any{"a.b": 2}}, []string{`status.a\.b`}},
		{"list length", Answer{Status: map[string]any{"l": []any{1}}}, Answer{Status: map[string]any{"l": []any{1, 2}}}, []string{"status.l"}},
		{"list element", Answer{Status: map[string]any{"l": []any{1, 2}}}, Answer{Status: map[string]any{"l": []any{1, 3}}}, []string{"status.l[1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Diff(tt.stable, tt.candidate)); d != "" {
				t.Errorf("Diff (-want +got):\n%s", d)
			}
		})
	}
}

func TestDiffNamesPathsNeverValues(t *testing.T) {
	s := Answer{Status: map[string]any{"token": "s3cret-stable"}}
	c := Answer{Status: map[string]any{"token": "s3cret-candidate"}}
	for _, p := range Diff(s, c) {
		if strings.Contains(p, "s3cret") {
			t.Fatalf("path %q carries a value", p)
		}
	}
}

func TestDiffIsBounded(t *testing.T) {
	s, c := map[string]any{}, map[string]any{}
	for i := range 80 {
		s[fmt.Sprintf("k%02d", i)], c[fmt.Sprintf("k%02d", i)] = 1, 2
	}
	got := Diff(Answer{Status: s}, Answer{Status: c})
	if len(got) != maxPaths+1 || got[maxPaths] != "… and 30 more" {
		t.Errorf("got %d paths ending %q; want %d and a count of 30 more", len(got), got[len(got)-1], maxPaths+1)
	}
}

func TestGate(t *testing.T) {
	g := Gate{MaxErrorRatio: 0.1, MaxDivergenceRatio: 0.2, MinSamples: 10}
	window := func(samples ...Sample) Window {
		var w Window
		for _, s := range samples {
			w.Add(s)
		}
		return w
	}
	ok := Sample{Reason: reasonSucceeded, Compared: true}
	bad := Sample{Reason: "RemoteError"}
	div := Sample{Reason: reasonSucceeded, Compared: true, Diverged: true}
	rep := func(s Sample, n int) []Sample {
		out := make([]Sample, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	tests := []struct {
		name string
		w    Window
		want Verdict
	}{
		{"pending below minSamples even when all fail", window(rep(bad, 9)...), Pending},
		{"throttled and canceled are not samples", window(append(rep(ok, 9), Sample{Reason: reasonThrottled}, Sample{Reason: reasonCanceled})...), Pending},
		{"holds", window(append(rep(ok, 9), bad)...), Holds},
		{"errors above bound", window(append(rep(ok, 8), bad, bad)...), Fails},
		{"divergence at bound holds", window(append(rep(ok, 8), div, div)...), Holds},
		{"divergence above bound", window(append(rep(ok, 7), div, div, div)...), Fails},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := g.Judge(tt.w)
			if got != tt.want {
				t.Errorf("Judge(%+v) = %v (%s), want %v", tt.w, got, why, tt.want)
			}
			if (got == Fails) != (why != "") {
				t.Errorf("a failed verdict, and only one, says why: %v %q", got, why)
			}
		})
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := State{SpecHash: "abc", Phase: Progressing, Step: 2, StepStarted: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Window: Window{Samples: 12, Errors: 1, Compared: 12, Divergences: 2}, Reason: "r"}
	for i := range 25 {
		s.Record(Divergence{CR: fmt.Sprintf("ns/cr-%d", i), Paths: []string{"status.phase"}, At: s.StepStarted})
	}
	if len(s.Divergences) != keptDivergences || s.Divergences[0].CR != "ns/cr-5" {
		t.Fatalf("kept %d divergences starting at %s; want the last %d", len(s.Divergences), s.Divergences[0].CR, keptDivergences)
	}
	v, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	edited := strings.Replace(v, `"Progressing"`, `"Sideways"`, 1)
	if _, err := Decode(edited); err == nil || !strings.Contains(err.Error(), "Sideways") {
		t.Errorf("an edited phase: err = %v, want one naming it", err)
	}
	if _, err := Decode("{"); err == nil {
		t.Error("a truncated value decoded")
	}
}

func TestPlanSteps(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := Plan{Mode: ModeCanary, Steps: []int{5, 50, 100}, Interval: time.Minute, Gate: Gate{MaxErrorRatio: 0.1, MaxDivergenceRatio: 1, MinSamples: 2}, SpecHash: "h1"}
	s := p.Start(nil, t0)
	if s.Phase != Progressing || p.Percent(s) != 5 {
		t.Fatalf("start: %s at %d%%", s.Phase, p.Percent(s))
	}
	good := Sample{Reason: reasonSucceeded}
	// The interval passed but no verdict: wait.
	if _, c := p.Advance(s, t0.Add(time.Hour)); c != NoChange {
		t.Fatalf("pending gate stepped: %v", c)
	}
	s.Window.Add(good)
	s.Window.Add(good)
	if _, c := p.Advance(s, t0.Add(30*time.Second)); c != NoChange {
		t.Fatalf("stepped before the interval: %v", c)
	}
	s, c := p.Advance(s, t0.Add(time.Minute))
	if c != Stepped || p.Percent(s) != 50 || s.Window != (Window{}) || !s.StepStarted.Equal(t0.Add(time.Minute)) {
		t.Fatalf("step: %v at %d%%, window %+v", c, p.Percent(s), s.Window)
	}
	// A restart resumes the same step; a new candidate starts over.
	if r := p.Start(&s, t0.Add(2*time.Minute)); r.Step != 1 {
		t.Errorf("restart resumed at step %d, want 1", r.Step)
	}
	if r := (Plan{Mode: ModeCanary, Steps: p.Steps, SpecHash: "h2"}).Start(&s, t0); r.Step != 0 {
		t.Errorf("a new candidate resumed at step %d, want 0", r.Step)
	}
	s.Window.Add(good)
	s.Window.Add(Sample{Reason: "RemoteError"})
	s, c = p.Advance(s, t0.Add(61*time.Second))
	if c != Failed || s.Phase != RolledBack || s.FailedAtPercent != 50 || p.Percent(s) != 0 || !strings.Contains(s.Reason, "error ratio") {
		t.Fatalf("failed gate: %v %s failedAt %d percent %d reason %q", c, s.Phase, s.FailedAtPercent, p.Percent(s), s.Reason)
	}
	if _, c := p.Advance(s, t0.Add(time.Hour)); c != NoChange {
		t.Errorf("a rolled-back rollout moved: %v", c)
	}
}

func TestPlanCompletesAndStillJudges(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := Plan{Mode: ModeCanary, Steps: []int{100}, Interval: time.Minute, Gate: Gate{MaxErrorRatio: 0, MaxDivergenceRatio: 0, MinSamples: 1}}
	s := p.Start(nil, t0)
	s.Window.Add(Sample{Reason: reasonSucceeded})
	s, c := p.Advance(s, t0.Add(time.Minute))
	if c != Completed || s.Phase != Complete || p.Percent(s) != 100 {
		t.Fatalf("complete: %v %s %d%%", c, s.Phase, p.Percent(s))
	}
	s.Window.Add(Sample{Reason: "RemoteError"})
	if s, c = p.Advance(s, t0.Add(2*time.Minute)); c != Failed || s.FailedAtPercent != 100 {
		t.Fatalf("a failure after completion: %v at %d%%", c, s.FailedAtPercent)
	}
}

func TestShadowNeverSteps(t *testing.T) {
	t0 := time.Now()
	p := Plan{Mode: ModeShadow, Steps: DefaultSteps, Interval: time.Second, Gate: Gate{MaxErrorRatio: 1, MaxDivergenceRatio: 0.5, MinSamples: 1}}
	s := p.Start(nil, t0)
	s.Window.Add(Sample{Reason: reasonSucceeded, Compared: true})
	if s, c := p.Advance(s, t0.Add(time.Hour)); c != NoChange || p.Percent(s) != 0 {
		t.Fatalf("shadow: %v at %d%%", c, p.Percent(s))
	}
	s.Window.Add(Sample{Reason: reasonSucceeded, Compared: true, Diverged: true})
	s.Window.Add(Sample{Reason: reasonSucceeded, Compared: true, Diverged: true})
	// Nothing to roll back in shadow mode: the verdict is kept and shadowing goes on.
	s, c := p.Advance(s, t0.Add(time.Hour))
	if c != NoChange || s.Phase != Shadowing || !strings.Contains(s.Reason, "divergence ratio") {
		t.Fatalf("shadow with a failing gate: %v, phase %s, reason %q; want no change, still shadowing, the verdict kept", c, s.Phase, s.Reason)
	}
}

// The divergence term waits for minSamples compared answers, and the canary passes the
// candidate served are judged on their own: a few real failures are not diluted by many
// shadowed dry runs of the stable slice.
func TestGateJudgesEachTermOnItsOwnCount(t *testing.T) {
	g := Gate{MaxErrorRatio: 0.1, MaxDivergenceRatio: 0.1, MinSamples: 10}
	var w Window
	for range 10 {
		w.Add(Sample{Reason: reasonSucceeded, Served: true})
	}
	w.Add(Sample{Reason: reasonSucceeded, Compared: true, Diverged: true}) // 1 of 1 compared
	if v, why := g.Judge(w); v != Holds {
		t.Errorf("one diverging comparison among 11 samples: %v %q, want Holds (too few compared)", v, why)
	}
	var d Window
	for range 100 {
		d.Add(Sample{Reason: reasonSucceeded, Compared: true})
	}
	for range 10 {
		d.Add(Sample{Reason: "ApplyFailed", Served: true})
	}
	if v, why := g.Judge(d); v != Fails || !strings.Contains(why, "canary passes") {
		t.Errorf("10 of 10 served passes failed beside 100 good dry runs: %v %q, want Fails on the served passes", v, why)
	}
}

// A stable answer ork would refuse is no comparison (live, remote check and replay agree):
// the candidate's objects are not all counted as divergences.
func TestCompareSkipsAStableAnswerThatDoesNotBuild(t *testing.T) {
	bad := &remote.Result{Result: "ok", Resources: []map[string]any{{"type": "nosuchtype", "fields": map[string]any{"name": "x"}}}}
	good := &remote.Result{Result: "ok", Resources: []map[string]any{{"type": "configmap", "fields": map[string]any{"name": "x", "data": map[string]any{"a": "1"}}}}}
	if paths, compared, failed := Compare(bad, good, "ns", "cr"); compared || failed != "" || len(paths) != 0 {
		t.Errorf("stable refused: paths %v, compared %v, failed %q; want nothing compared, the candidate not failed", paths, compared, failed)
	}
	if _, compared, failed := Compare(good, bad, "ns", "cr"); compared || failed == "" {
		t.Errorf("candidate refused: compared %v, failed %q; want its reason", compared, failed)
	}
	if paths, compared, _ := Compare(good, good, "ns", "cr"); !compared || len(paths) != 0 {
		t.Errorf("same answers: paths %v, compared %v", paths, compared)
	}
}
