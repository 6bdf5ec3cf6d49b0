package shard

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// uidField is the field KEP-5866 hashes, in the selector's CEL-style path.
const uidField = "object.metadata.uid"

// Hash is the KEP-5866 hash of uid: FNV-1a 64 of its bytes, as the apiserver computes it.
// It goes through the apimachinery function the apiserver uses, so the two cannot disagree.
func Hash(uid types.UID) uint64 {
	h, err := strconv.ParseUint(sharding.HashField(string(uid)), 16, 64)
	if err != nil { // HashField writes 16 hex digits: this cannot happen
		panic(fmt.Sprintf("sharding.HashField(%q): %v", uid, err))
	}
	return h
}

// BucketOf is the bucket of uid among b (valid) buckets: the hash's top log2(b) bits, so
// bucket i is the i-th of b equal ranges of the 64-bit space.
func BucketOf(uid types.UID, b int) int {
	return int(Hash(uid) >> (64 - log2(b)))
}

// Range is a half-open range [Start, End) of the hash space, as selector bounds: End of the
// last bucket is 2^64, which needs 17 hex digits.
type Range struct {
	Start, End string
}

// BucketRange is the range of bucket i among b.
func BucketRange(i, b int) Range {
	return span(i, i+1, b)
}

// span is the range of buckets [from, to) among b.
func span(from, to, b int) Range {
	shift := 64 - log2(b)
	end := "0x10000000000000000"
	if to < b {
		end = fmt.Sprintf("0x%016x", uint64(to)<<shift)
	}
	return Range{Start: fmt.Sprintf("0x%016x", uint64(from)<<shift), End: end}
}

// Selector is the shard selector for the held buckets among b: the OR of their ranges, with
// adjacent buckets merged into one range. It is both the ListOptions.ShardSelector string
// (String) and the client-side matcher (Matches) that a server without the feature gate
// makes necessary. With no bucket held it returns nil: an empty selector would mean every
// object, so a replica that holds nothing must run no informer at all.
func Selector(held []int, b int) sharding.Selector {
	hs := sortedUnique(held)
	if len(hs) == 0 {
		return nil
	}
	var reqs []sharding.ShardRangeRequirement
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j] == hs[j-1]+1 {
			j++
		}
		r := span(hs[i], hs[j-1]+1, b)
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: uidField, Start: r.Start, End: r.End})
		i = j
	}
	return sharding.NewSelector(reqs...)
}

// Slots is the number of child slots: the first byte of the owner's hash.
const Slots = 256

// SlotValues are the values of naming.SlotLabel (naming.SlotOf an owner) of the held buckets
// among b, sorted: bucket i covers the 256/b slots from i*256/b.
func SlotValues(held []int, b int) []string {
	per := Slots / b
	var out []string
	for _, i := range sortedUnique(held) {
		for s := i * per; s < (i+1)*per; s++ {
			out = append(out, fmt.Sprintf("%02x", s))
		}
	}
	return out
}

// FairShare is the most buckets a replica takes: ⌈b / live⌉, with live counting this
// replica (at least 1). Every replica taking up to its share covers all b buckets.
func FairShare(b, live int) int {
	live = max(live, 1)
	return (b + live - 1) / live
}

func log2(b int) int { return bits.TrailingZeros(uint(b)) }

func sortedUnique(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
