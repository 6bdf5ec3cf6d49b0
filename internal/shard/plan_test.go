package shard

import (
	"fmt"
	"testing"
)

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name             string
		mine, takeable   []int
		share            int
		fenced           bool
		offset           int
		wantTake, wantBk string
	}{
		{"alone takes every bucket", nil, []int{0, 1, 2, 3}, 4, false, 0, "[0 1 2 3]", "[]"},
		{"takes only up to its share", []int{0}, []int{1, 2, 3}, 2, false, 0, "[1]", "[]"},
		{"starts at its offset and wraps", nil, []int{0, 1, 2, 3, 4, 5}, 3, false, 4, "[0 4 5]", "[]"},
		{"an offset between takeable buckets starts at the next", nil, []int{1, 5, 9}, 1, false, 6, "[9]", "[]"},
		{"at its share takes nothing", []int{0, 1}, []int{2, 3}, 2, false, 0, "[]", "[]"},
		{"above its share hands back the highest", []int{0, 3, 5, 7, 9, 11}, []int{1}, 4, false, 0, "[]", "[9 11]"},
		{"fenced takes nothing", nil, []int{0, 1}, 2, true, 0, "[]", "[]"},
		{"fenced still hands back above its share", []int{0, 1, 2}, nil, 2, true, 0, "[]", "[2]"},
		{"nothing takeable", []int{0}, nil, 4, false, 0, "[]", "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			take, back := plan(tc.mine, tc.takeable, tc.share, tc.fenced, tc.offset)
			if got := fmt.Sprint(orEmpty(take)); got != tc.wantTake {
				t.Errorf("take = %s, want %s", got, tc.wantTake)
			}
			if got := fmt.Sprint(orEmpty(back)); got != tc.wantBk {
				t.Errorf("hand back = %s, want %s", got, tc.wantBk)
			}
		})
	}
}

func orEmpty(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}
