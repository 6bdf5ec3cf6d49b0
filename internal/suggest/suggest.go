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
	// A third of the longer word, at least 2: "managedResource" -> "managedResources" is 1,
	// while unrelated short words stay unmatched.
	limit := max(len(name), len(best)) / 3
	if limit < 2 {
		limit = 2
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
