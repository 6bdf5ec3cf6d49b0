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

// report prints the table, and writes results.json and a convergence plot per N.
func report(w io.Writer, dir string, rs []result) error {
	fmt.Fprintln(w, "| N | system | converged | share of ceiling | CPU | CPU per CR | peak RSS | calls/CR | writes/CR | reads/CR | Events | p50 / p99 to Ready | idle writes / calls |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		share, idle, calls := "1.00", "—", "—"
		// Only ork calls the reconciler over HTTP; the others have their logic in-process.
		if r.System == "ork" {
			calls = fmt.Sprintf("%.2f", r.CallsPerCR)
		}
		if r.System != "ceiling" {
			share = fmt.Sprintf("%.2f", r.ShareOfCeiling)
			idleCalls := "—"
			if r.System == "ork" {
				idleCalls = fmt.Sprintf("%.0f", r.IdleCalls)
			}
			idle = fmt.Sprintf("%.0f / %s in %.0fs", r.IdleWrites, idleCalls, r.IdleSeconds)
		}
		fmt.Fprintf(w, "| %d | %s | %.1f s | %s | %.1f s | %.2f ms | %.0f MiB | %s | %.2f | %.2f | %.0f | %.0f / %.0f ms | %s |\n",
			r.N, r.System, r.ConvergedSeconds, share, r.CPUSeconds, r.CPUPerCRMillis, r.PeakRSSMiB,
			calls, r.WritesPerCR, r.ReadsPerCR, r.EventWrites, r.P50Millis, r.P99Millis, idle)
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		return err
	}
	byN := map[int][]result{}
	for _, r := range rs {
		byN[r.N] = append(byN[r.N], r)
	}
	for n, group := range byN {
		path := filepath.Join(dir, fmt.Sprintf("convergence-%d.svg", n))
		if err := os.WriteFile(path, plot(n, group), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nplot: %s\n", path)
	}
	return nil
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
	colours := []string{"#888888", "#1f77b4", "#d62728", "#2ca02c"}
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
