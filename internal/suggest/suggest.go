// Package suggest finds the nearest known name to a misspelt one, for "did you mean" hints.
package suggest

import "strings"

// Nearest returns the candidate closest to name by edit distance (case-insensitive), or ""
// when none is close enough to be a plausible typo.
func Nearest(name string, candidates []string) string {
	best, bestDist := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := distance(lname, strings.ToLower(c))
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 {
		return ""
	}
	// A third of the longer word, at least 1: "managedResource" -> "managedResources" is 1,
	// while short unrelated words ("pods" and "jobs") stay unmatched.
	limit := max(1, max(len(name), len(best))/3)
	if bestDist > limit {
		return ""
	}
	return best
}

// distance is the optimal-string-alignment distance between a and b: Levenshtein plus
// adjacent transpositions, the commonest typo ("hots" for "host").
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
