package shard_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	apisharding "k8s.io/apiserver/pkg/sharding"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
)

// fnv1a64 is FNV-1a 64 written out from its definition (offset basis and prime), the hash
// KEP-5866 names, to check that Hash is that hash and not merely what apimachinery does.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func TestHashIsFNV1a64OfTheUID(t *testing.T) {
	// The first two are the published FNV-1a 64 test vectors.
	for _, tc := range []struct {
		uid  types.UID
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"0b1c5f4e-7a7d-4e5b-9c1e-2f0a3b4c5d6e", fnv1a64("0b1c5f4e-7a7d-4e5b-9c1e-2f0a3b4c5d6e")},
	} {
		if got := shard.Hash(tc.uid); got != tc.want {
			t.Errorf("Hash(%q) = %016x, want %016x", tc.uid, got, tc.want)
		}
	}
	for range 100 {
		uid := uuid.NewUUID()
		if got, want := shard.Hash(uid), fnv1a64(string(uid)); got != want {
			t.Fatalf("Hash(%q) = %016x, want %016x", uid, got, want)
		}
	}
}

func TestBucketRange(t *testing.T) {
	for _, tc := range []struct {
		i, b       int
		start, end string
	}{
		{0, 2, "0x0000000000000000", "0x8000000000000000"},
		{1, 2, "0x8000000000000000", "0x10000000000000000"},
		{2, 4, "0x8000000000000000", "0xc000000000000000"},
		{5, 16, "0x5000000000000000", "0x6000000000000000"},
		{0, 256, "0x0000000000000000", "0x0100000000000000"},
		{255, 256, "0xff00000000000000", "0x10000000000000000"},
	} {
		got := shard.BucketRange(tc.i, tc.b)
		if got.Start != tc.start || got.End != tc.end {
			t.Errorf("BucketRange(%d, %d) = %+v, want [%s, %s)", tc.i, tc.b, got, tc.start, tc.end)
		}
	}
}

func TestBucketOfIsTheTopBitsOfTheHash(t *testing.T) {
	for _, b := range []int{2, 16, 256} {
		for range 200 {
			uid := uuid.NewUUID()
			i := shard.BucketOf(uid, b)
			r := shard.BucketRange(i, b)
			h := fmt.Sprintf("0x%016x", fnv1a64(string(uid)))
			if !hexLE(r.Start, h) || !hexLess(h, r.End) {
				t.Fatalf("BucketOf(%s, %d) = %d, whose range %+v does not hold %s", uid, b, i, r, h)
			}
		}
	}
}

func hexLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func hexLE(a, b string) bool { return a == b || hexLess(a, b) }

func TestSelectorString(t *testing.T) {
	const r = "shardRange(object.metadata.uid, "
	for _, tc := range []struct {
		name string
		held []int
		b    int
		want string
	}{
		{"one bucket", []int{1}, 4, r + "'0x4000000000000000', '0x8000000000000000')"},
		{"the last bucket ends at 2^64", []int{3}, 4, r + "'0xc000000000000000', '0x10000000000000000')"},
		{"adjacent buckets merge", []int{2, 1}, 4, r + "'0x4000000000000000', '0xc000000000000000')"},
		{"every bucket is one range", []int{0, 1}, 2, r + "'0x0000000000000000', '0x10000000000000000')"},
		{"gaps make an OR", []int{0, 2, 3, 7, 0}, 8,
			r + "'0x0000000000000000', '0x2000000000000000') || " +
				r + "'0x4000000000000000', '0x8000000000000000') || " +
				r + "'0xe000000000000000', '0x10000000000000000')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := shard.Selector(tc.held, tc.b)
			if got := sel.String(); got != tc.want {
				t.Errorf("Selector(%v, %d) =\n %s\nwant\n %s", tc.held, tc.b, got, tc.want)
			}
			// The apiserver's own parser must accept it and read back the same ranges.
			parsed, err := apisharding.Parse(sel.String())
			if err != nil {
				t.Fatalf("the apiserver's parser refuses %q: %v", sel.String(), err)
			}
			if !slices.Equal(parsed.Requirements(), sel.Requirements()) {
				t.Errorf("parsed %v, want %v", parsed.Requirements(), sel.Requirements())
			}
		})
	}
}

func TestSelectorOfNothingIsNil(t *testing.T) {
	if sel := shard.Selector(nil, 16); sel != nil {
		t.Errorf("Selector(nil) = %q, want nil (an empty selector would select everything)", sel.String())
	}
}

func TestSelectorMatchesExactlyTheHeldBuckets(t *testing.T) {
	const b = 16
	held := []int{0, 3, 4, 5, 9, 15}
	sel := shard.Selector(held, b)
	for range 500 {
		obj := &unstructured.Unstructured{}
		obj.SetUID(uuid.NewUUID())
		got, err := sel.Matches(obj)
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Contains(held, shard.BucketOf(obj.GetUID(), b)); got != want {
			t.Fatalf("uid %s of bucket %d: Matches = %v, want %v", obj.GetUID(), shard.BucketOf(obj.GetUID(), b), got, want)
		}
	}
}

func TestSlotOf(t *testing.T) {
	for range 200 {
		uid := uuid.NewUUID()
		want := fmt.Sprintf("%016x", fnv1a64(string(uid)))[:2]
		if got := naming.SlotOf(uid); got != want {
			t.Fatalf("SlotOf(%s) = %q, want %q", uid, got, want)
		}
		// A child's slot is among the slots of its owner's bucket, whatever B.
		for _, b := range []int{2, 16, 256} {
			if !slices.Contains(shard.SlotValues([]int{shard.BucketOf(uid, b)}, b), want) {
				t.Fatalf("slot %s of %s not among the slots of its bucket %d of %d", want, uid, shard.BucketOf(uid, b), b)
			}
		}
	}
}

func TestSlotValues(t *testing.T) {
	for _, tc := range []struct {
		held []int
		b    int
		want string
	}{
		{[]int{0}, 256, "00"},
		{[]int{255}, 256, "ff"},
		{[]int{1}, 64, "04 05 06 07"},
		{[]int{3, 0}, 128, "00 01 06 07"},
		{nil, 16, ""},
	} {
		if got := strings.Join(shard.SlotValues(tc.held, tc.b), " "); got != tc.want {
			t.Errorf("SlotValues(%v, %d) = %q, want %q", tc.held, tc.b, got, tc.want)
		}
	}
	if n := len(shard.SlotValues([]int{0, 1}, 2)); n != 256 {
		t.Errorf("both buckets of 2 have %d slots, want 256", n)
	}
}

func TestFairShare(t *testing.T) {
	for _, tc := range []struct{ b, live, want int }{
		{16, 1, 16}, {16, 3, 6}, {16, 4, 4}, {16, 5, 4}, {16, 17, 1}, {2, 3, 1}, {256, 3, 86}, {16, 0, 16},
	} {
		if got := shard.FairShare(tc.b, tc.live); got != tc.want {
			t.Errorf("FairShare(%d, %d) = %d, want %d", tc.b, tc.live, got, tc.want)
		}
	}
}
