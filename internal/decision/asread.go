package decision

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownedAsRead is the hex SHA-256 of entries (ork's own: mine) as the object carries them:
// each entry's operation, API version and field set's bytes, unsorted keys and all. A typed
// object keeps the bytes the apiserver sent, which for one stored object are the same on
// every read; "" for no entry. Times are left out, as in OwnedFieldsDigest.
func ownedAsRead(entries []metav1.ManagedFieldsEntry) string {
	if len(entries) == 0 {
		return ""
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b metav1.ManagedFieldsEntry) int {
		return cmp.Or(cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.APIVersion, b.APIVersion),
			slices.Compare(a.FieldsV1.GetRawBytes(), b.FieldsV1.GetRawBytes()))
	})
	h := sha256.New()
	for _, e := range sorted {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", e.Operation, e.APIVersion, len(e.FieldsV1.GetRawBytes()))
		h.Write(e.FieldsV1.GetRawBytes())
	}
	return hex.EncodeToString(h.Sum(nil))
}
