package naming_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/orkspace/ork/internal/naming"
)

func TestValidBuckets(t *testing.T) {
	for _, b := range []int{2, 4, 8, 16, 32, 64, 128, 256} {
		if err := naming.ValidBuckets(b); err != nil {
			t.Errorf("ValidBuckets(%d) = %v, want nil", b, err)
		}
	}
	for _, b := range []int{-2, 0, 1, 3, 6, 12, 100, 512, 1024} {
		if err := naming.ValidBuckets(b); err == nil {
			t.Errorf("ValidBuckets(%d) = nil, want an error", b)
		}
	}
}

// fnv1a64 is FNV-1a 64 written out from its definition (offset basis and prime), the hash
// KEP-5866 names, to check that SlotOf is that hash's first byte.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func TestSlotOfIsTheFirstByteOfTheHash(t *testing.T) {
	for range 200 {
		uid := uuid.NewUUID()
		if got, want := naming.SlotOf(uid), fmt.Sprintf("%02x", fnv1a64(string(uid))>>56); got != want {
			t.Fatalf("SlotOf(%s) = %q, want %q", uid, got, want)
		}
	}
}

func TestLeaseNames(t *testing.T) {
	if got := naming.BucketLeaseName("ork", 3, 16); got != "ork-bucket-3-of-16" {
		t.Errorf("BucketLeaseName = %q", got)
	}
	if got := naming.MemberLeaseName("ork", "ork-7d9f-x2"); got != "ork-member-ork-7d9f-x2" {
		t.Errorf("MemberLeaseName = %q", got)
	}
	for _, tc := range []struct {
		lease string
		i, b  int
		ok    bool
	}{
		{"ork-bucket-3-of-16", 3, 16, true},
		{"ork-bucket-0-of-2", 0, 2, true},
		{"ork-bucket-16-of-16", 0, 0, false},
		{"ork-bucket-03-of-16", 0, 0, false},
		{"ork-bucket-3-of-12", 0, 0, false},
		{"ork-bucket-+3-of-16", 0, 0, false},
		{"other-bucket-3-of-16", 0, 0, false},
		{"ork", 0, 0, false},
		{"ork-member-p", 0, 0, false},
	} {
		i, b, ok := naming.ParseBucketLeaseName("ork", tc.lease)
		if i != tc.i || b != tc.b || ok != tc.ok {
			t.Errorf("ParseBucketLeaseName(%q) = %d, %d, %v; want %d, %d, %v", tc.lease, i, b, ok, tc.i, tc.b, tc.ok)
		}
	}
	if !naming.IsMemberLeaseName("ork", "ork-member-p") || naming.IsMemberLeaseName("ork", "ork-member-") ||
		naming.IsMemberLeaseName("ork", "ork-bucket-1-of-2") {
		t.Error("IsMemberLeaseName misjudges")
	}
}
