package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// BucketsAnnotation records B on every bucket and member Lease (SPEC §6): a replica of
// another B fences on it, and `kubectl get lease -o yaml` shows which ring a Lease is of.
const BucketsAnnotation = "orkestra.orkspace.io/shard-buckets"

// SlotLabel is the child label whose value is SlotOf the owner (SPEC §6).
const SlotLabel = "orkestra.orkspace.io/shard"

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
