package main

import (
	"slices"
	"strings"
)

// spread is the median of a measure over runs, and its range.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Runs   int     `json:"runs"`
}

// spreadOf is the median (the mean of the two middle values for an even count), minimum and
// maximum of vs; zero for none.
func spreadOf(vs []float64) spread {
	if len(vs) == 0 {
		return spread{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Median: m, Min: s[0], Max: s[len(s)-1], Runs: len(s)}
}

// summary is one system on one workload at one N over every run.
type summary struct {
	Workload string `json:"workload"`
	N        int    `json:"n"`
	System   string `json:"system"`
	// Converged is the convergence time in seconds; Share the share of ceiling (a) (none for
	// the startup workload); EditToReady the startup workload's figure.
	Converged   spread `json:"convergedSeconds"`
	Share       spread `json:"shareOfCeiling"`
	EditToReady spread `json:"editToReadySeconds"`
	// Met: the median share meets the target (never for a ceiling, which targets are
	// stated against).
	Met bool `json:"met"`
}

// summarize groups results by workload, N and system, in the order first measured.
func summarize(rs []result, target float64) []summary {
	type key struct {
		workload, system string
		n                int
	}
	var order []key
	by := map[key][]result{}
	for _, r := range rs {
		k := key{r.Workload, r.System, r.N}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	var out []summary
	for _, k := range order {
		var conv, share, edit []float64
		for _, r := range by[k] {
			conv = append(conv, r.ConvergedSeconds)
			if r.ShareOfCeiling > 0 {
				share = append(share, r.ShareOfCeiling)
			}
			if r.EditToReadySeconds > 0 {
				edit = append(edit, r.EditToReadySeconds)
			}
		}
		s := summary{Workload: k.workload, N: k.n, System: k.system,
			Converged: spreadOf(conv), Share: spreadOf(share), EditToReady: spreadOf(edit)}
		s.Met = !isCeilingName(k.system) && s.Share.Runs > 0 && s.Share.Median >= target
		out = append(out, s)
	}
	return out
}

func isCeilingName(s string) bool { return strings.HasPrefix(s, "ceiling") }
