package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// point is one CR reaching Ready, T seconds after the first create.
type point struct {
	T float64 `json:"t"`
}

func sortPoints(ps []point) { slices.SortFunc(ps, func(a, b point) int { return cmpFloat(a.T, b.T) }) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// results is what results.json holds: every run's results, and the summaries over runs.
type results struct {
	Target    float64   `json:"target"`
	Runs      int       `json:"runs"`
	Results   []result  `json:"results"`
	Summaries []summary `json:"summaries"`
}

func writeResults(dir string, rs []result) error {
	return writeJSON(dir, results{Results: rs})
}

func writeJSON(dir string, v results) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644)
}

// report prints every run's table, the summary over runs against the target, the request
// mix, and writes results.json and, for the first run, a convergence plot per workload and N.
func report(w io.Writer, o options, rs []result, notes []string) error {
	var conv, startup []result
	for _, r := range rs {
		if r.EditToReadySeconds > 0 {
			startup = append(startup, r)
		} else {
			conv = append(conv, r)
		}
	}
	sums := summarize(rs, o.target)
	if len(conv) > 0 {
		fmt.Fprintln(w, "## Every run")
		fmt.Fprintln(w)
		runTable(w, conv)
		fmt.Fprintf(w, "\n## Over %d run(s): median share of ceiling (a), target %.2f\n\n", o.runs, o.target)
		summaryTable(w, sums)
		fmt.Fprintln(w, "\n## Requests per CR until convergence (run 1; the apiserver's counts)")
		for _, g := range groups(conv) {
			if g[0].Run != 1 {
				continue
			}
			fmt.Fprintf(w, "\n%s, N = %d:\n\n", g[0].Workload, g[0].N)
			mixTable(w, g)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, "\nnot measured:", n)
	}
	if len(startup) > 0 {
		fmt.Fprintln(w, "\n## Startup: from a spec edit, made as ork became ready, to that CR Ready")
		fmt.Fprintln(w)
		startupTable(w, startup, sums)
	}
	if err := writeJSON(o.out, results{Target: o.target, Runs: o.runs, Results: rs, Summaries: sums}); err != nil {
		return err
	}
	for _, g := range groups(conv) {
		if g[0].Run != 1 {
			continue
		}
		name := fmt.Sprintf("convergence-%d.svg", g[0].N)
		if g[0].Workload != "default" {
			name = fmt.Sprintf("convergence-%s-%d.svg", g[0].Workload, g[0].N)
		}
		path := filepath.Join(o.out, name)
		if err := os.WriteFile(path, plot(g[0].N, g), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nplot: %s\n", path)
	}
	return nil
}

// groups splits results into runs of one run, workload and N, in order.
func groups(rs []result) [][]result {
	var out [][]result
	for i, r := range rs {
		if i == 0 || r.Run != rs[i-1].Run || r.Workload != rs[i-1].Workload || r.N != rs[i-1].N {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

func runTable(w io.Writer, rs []result) {
	fmt.Fprintln(w, "| run | workload | N | system | converged | share of ceiling (a) | CPU | CPU per CR | control plane CPU per CR | peak RSS | calls/CR | writes/CR | reads/CR | Events | p50 / p99 to Ready | idle writes (Events) / calls |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		share, idle, calls := "—", "—", "—"
		if r.ShareOfCeiling > 0 {
			share = fmt.Sprintf("%.2f", r.ShareOfCeiling)
		}
		// Only ork calls the reconciler over HTTP; the others have their logic in-process.
		if r.System == "ork" {
			calls = fmt.Sprintf("%.2f", r.CallsPerCR)
		}
		if !isCeilingName(r.System) {
			idleCalls := "—"
			if r.System == "ork" {
				idleCalls = fmt.Sprintf("%.0f", r.IdleCalls)
			}
			idle = fmt.Sprintf("%.0f (%.0f) / %s in %.0fs", r.IdleWrites, r.IdleEventWrites, idleCalls, r.IdleSeconds)
		}
		fmt.Fprintf(w, "| %d | %s | %d | %s | %.1f s | %s | %.1f s | %.2f ms | %.2f ms | %.0f MiB | %s | %.2f | %.2f | %.0f | %.0f / %.0f ms | %s |\n",
			r.Run, r.Workload, r.N, r.System, r.ConvergedSeconds, share, r.CPUSeconds, r.CPUPerCRMillis, r.ControlPlaneCPUPerCRMillis, r.PeakRSSMiB,
			calls, r.WritesPerCR, r.ReadsPerCR, r.EventWrites, r.P50Millis, r.P99Millis, idle)
	}
}

func summaryTable(w io.Writer, sums []summary) {
	fmt.Fprintln(w, "| workload | N | system | runs | converged, median (min–max) | share of ceiling (a), median (min–max) | target |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, s := range sums {
		if s.EditToReady.Runs > 0 {
			continue
		}
		met, share := "—", "—"
		if s.Share.Runs > 0 {
			share = fmt.Sprintf("%.2f (%.2f–%.2f)", s.Share.Median, s.Share.Min, s.Share.Max)
		}
		switch {
		case isCeilingName(s.System) || s.Share.Runs == 0:
		case s.Met:
			met = "met"
		default:
			met = "not met"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.1f s (%.1f–%.1f) | %s | %s |\n", s.Workload, s.N, s.System, s.Converged.Runs,
			s.Converged.Median, s.Converged.Min, s.Converged.Max, share, met)
	}
}

func startupTable(w io.Writer, rs []result, sums []summary) {
	fmt.Fprintln(w, "| run | N | ork | edit to Ready | every CR Ready (from ork ready) | CPU | peak RSS | calls/CR |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %d | %s | %.2f s | %.1f s | %.1f s | %.0f MiB | %.2f |\n",
			r.Run, r.N, r.System, r.EditToReadySeconds, r.BacklogSeconds, r.CPUSeconds, r.PeakRSSMiB, r.CallsPerCR)
	}
	fmt.Fprintln(w, "\n| N | ork | runs | edit to Ready, median (min–max) |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, s := range sums {
		if s.EditToReady.Runs > 0 {
			fmt.Fprintf(w, "| %d | %s | %d | %.2f s (%.2f–%.2f) |\n", s.N, s.System, s.EditToReady.Runs,
				s.EditToReady.Median, s.EditToReady.Min, s.EditToReady.Max)
		}
	}
}

// plot draws converged CRs over time, one line per system, as an SVG.
func plot(n int, rs []result) []byte {
	const width, height, left, bottom, top, right = 780, 420, 60, 40, 30, 200
	var tmax float64
	for _, r := range rs {
		if len(r.Timeline) > 0 {
			tmax = max(tmax, r.Timeline[len(r.Timeline)-1].T)
		}
	}
	tmax = niceCeil(tmax)
	x := func(t float64) float64 { return left + t/tmax*float64(width-left-right) }
	y := func(c int) float64 { return float64(height-bottom) - float64(c)/float64(n)*float64(height-bottom-top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Custom resources Ready over time, N = %d (fresh control plane per system)</text>`+"\n", left, n)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, height-bottom, width-right, height-bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, height-bottom)
	for i := 0; i <= 5; i++ {
		t := tmax * float64(i) / 5
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">%gs</text>`+"\n", x(t), height-bottom+16, t)
		c := n * i / 5
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%d</text>`+"\n", left-6, y(c)+4, c)
	}
	colours := []string{"#888888", "#bbbbbb", "#555555", "#1f77b4", "#d62728", "#2ca02c"}
	for i, r := range rs {
		colour := colours[i%len(colours)]
		var pts strings.Builder
		fmt.Fprintf(&pts, "%.1f,%.1f ", x(0), y(0))
		for j, p := range r.Timeline {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(p.T), y(j+1))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, strings.TrimSpace(pts.String()))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s: %.1fs</text>`+"\n", width-right+10, top+20+18*i, colour, r.System, r.ConvergedSeconds)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// niceCeil rounds a positive number up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
