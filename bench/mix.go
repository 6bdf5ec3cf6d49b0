package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// minShown is the smallest count per CR the request-mix table shows: below it, a kind of
// request is start-up or background noise (discovery, a namespace read), not per-CR work.
const minShown = 0.005

// requestMix is delta per CR, by kind of request, without what is not a system's work per
// CR: lists and watches (an informer's, the harness's own), requests for no resource
// (/metrics, /openapi/v3, discovery), and the harness's creates of the n CRs.
func requestMix(delta requestCounts, w workload, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range delta {
		verb, resource, _ := strings.Cut(k, " ")
		if verb == "LIST" || verb == "WATCH" || resource == "" || strings.HasPrefix(resource, "/") {
			continue
		}
		if verb == "POST" && w.isCR(resource) {
			v -= float64(crsOf(w, resource, n))
		}
		if per := v / float64(n); per >= minShown {
			out[k] = per
		}
	}
	return out
}

// crsOf is how many of n CRs the harness creates in plural.
func crsOf(w workload, plural string, n int) int {
	c := 0
	for i := range n {
		if w.kindOf(i).plural == plural {
			c++
		}
	}
	return c
}

// mixTable prints one row per result, one column per kind of request any of them made.
func mixTable(out io.Writer, rs []result) {
	kinds := map[string]bool{}
	for _, r := range rs {
		for k := range r.RequestsPerCR {
			kinds[k] = true
		}
	}
	cols := slices.Sorted(maps.Keys(kinds))
	if len(cols) == 0 {
		fmt.Fprintln(out, "(no requests counted)")
		return
	}
	fmt.Fprintf(out, "| system | %s | total |\n", strings.Join(cols, " | "))
	fmt.Fprintf(out, "|---|%s---|\n", strings.Repeat("---|", len(cols)))
	for _, r := range rs {
		cells := make([]string, len(cols))
		var total float64
		for i, c := range cols {
			v, ok := r.RequestsPerCR[c]
			cells[i] = "—"
			if ok {
				cells[i] = fmt.Sprintf("%.2f", v)
				total += v
			}
		}
		fmt.Fprintf(out, "| %s | %s | %.2f |\n", r.System, strings.Join(cells, " | "), total)
	}
}
