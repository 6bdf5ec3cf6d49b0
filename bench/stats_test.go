package main

import "testing"

func TestSpreadOfIsTheMedianAndRange(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want spread
	}{
		{"none", nil, spread{}},
		{"one", []float64{0.8}, spread{Median: 0.8, Min: 0.8, Max: 0.8, Runs: 1}},
		{"odd, unsorted", []float64{0.95, 0.7, 0.91}, spread{Median: 0.91, Min: 0.7, Max: 0.95, Runs: 3}},
		{"even: the mean of the middle two", []float64{1.0, 0.8, 0.9, 0.6}, spread{Median: 0.85, Min: 0.6, Max: 1.0, Runs: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := spreadOf(tc.in)
			if d := got.Median - tc.want.Median; d > 1e-9 || d < -1e-9 || got.Min != tc.want.Min || got.Max != tc.want.Max || got.Runs != tc.want.Runs {
				t.Fatalf("spreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestTargetIsMetOnlyWhenTheMedianMeetsIt(t *testing.T) {
	var rs []result
	add := func(sys string, shares ...float64) {
		for i, s := range shares {
			rs = append(rs, result{Run: i + 1, Workload: "default", N: 1000, System: sys, ConvergedSeconds: 10 / s, ShareOfCeiling: s})
		}
	}
	add("ceiling-a-32", 1, 1, 1)
	add("ork", 0.95, 0.85, 0.92)                  // median 0.92: met, though one run fell short
	add("controller-runtime-32", 0.95, 0.8, 0.85) // its best run meets it, the median does not
	sums := summarize(rs, 0.90)
	if len(sums) != 3 {
		t.Fatalf("got %d summaries, want 3: %+v", len(sums), sums)
	}
	want := map[string]bool{"ceiling-a-32": false, "ork": true, "controller-runtime-32": false}
	for _, s := range sums {
		if s.Met != want[s.System] {
			t.Errorf("%s: met = %v, want %v (share %+v)", s.System, s.Met, want[s.System], s.Share)
		}
		if s.Share.Runs != 3 {
			t.Errorf("%s: %d runs, want 3", s.System, s.Share.Runs)
		}
	}
	if got := sums[1].Share; got.Min != 0.85 || got.Max != 0.95 {
		t.Errorf("ork's spread = %.2f–%.2f, want 0.85–0.95", got.Min, got.Max)
	}
}
