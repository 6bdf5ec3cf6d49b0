package shard

import "slices"

// plan decides one round for a replica allowed share buckets: above its share it hands back
// the highest of the buckets it works (mine, sorted, not counting those already draining);
// below it, unless fenced, it takes from the takeable buckets (free or expired), starting at
// offset and wrapping, so that replicas starting together mostly try different buckets.
func plan(mine, takeable []int, share int, fenced bool, offset int) (take, handBack []int) {
	if len(mine) > share {
		return nil, slices.Clone(mine[share:])
	}
	if fenced || len(takeable) == 0 {
		return nil, nil
	}
	want := share - len(mine)
	start, _ := slices.BinarySearch(takeable, offset)
	for k := 0; k < len(takeable) && len(take) < want; k++ {
		take = append(take, takeable[(start+k)%len(takeable)])
	}
	slices.Sort(take)
	return take, nil
}
