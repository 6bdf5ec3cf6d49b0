package naming

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// BucketsAnnotation records B on every bucket and member Lease: a replica of another B fences
// on it, and `kubectl get lease -o yaml` shows which ring a Lease is of.
const BucketsAnnotation = Prefix + "shard-buckets"

// MinBuckets and MaxBuckets bound B (ork run --shard-buckets). The upper bound keeps every
// bucket a whole number of the 256 child slots, so a child's slot label never depends on B.
const (
	MinBuckets = 2
	MaxBuckets = 256
)

// ValidBuckets reports whether b is a power of two from MinBuckets to MaxBuckets.
func ValidBuckets(b int) error {
	if b < MinBuckets || b > MaxBuckets || b&(b-1) != 0 {
		return fmt.Errorf("shard buckets %d: want a power of two from %d to %d", b, MinBuckets, MaxBuckets)
	}
	return nil
}

// SlotOf is the value of SlotLabel for a child of the owner uid: the first two hex digits of
// the KEP-5866 hash of the uid (FNV-1a 64, through the apimachinery function the apiserver
// uses). It does not depend on B, so moving a bucket or changing B relabels nothing.
func SlotOf(owner types.UID) string {
	return sharding.HashField(string(owner))[:2]
}

// BucketLeaseName is the Lease of bucket i among b of the operator name.
func BucketLeaseName(name string, i, b int) string {
	return fmt.Sprintf("%s-bucket-%d-of-%d", name, i, b)
}

// MemberLeaseName is the Lease of one replica (pod) of the operator name.
func MemberLeaseName(name, pod string) string {
	return name + "-member-" + pod
}

// ParseBucketLeaseName returns the bucket and B of a bucket Lease of the operator name;
// ok is false for any other name (another operator's, a member's, a malformed one).
func ParseBucketLeaseName(name, lease string) (i, b int, ok bool) {
	rest, found := strings.CutPrefix(lease, name+"-bucket-")
	if !found {
		return 0, 0, false
	}
	is, bs, found := strings.Cut(rest, "-of-")
	if !found {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(is)
	b, err2 := strconv.Atoi(bs)
	// Canonical numbers only: "01" or "+1" would alias another Lease's bucket.
	if err1 != nil || err2 != nil || strconv.Itoa(i) != is || strconv.Itoa(b) != bs ||
		ValidBuckets(b) != nil || i < 0 || i >= b {
		return 0, 0, false
	}
	return i, b, true
}

// IsMemberLeaseName reports whether lease is a member Lease of the operator name.
func IsMemberLeaseName(name, lease string) bool {
	pod, ok := strings.CutPrefix(lease, name+"-member-")
	return ok && pod != ""
}
