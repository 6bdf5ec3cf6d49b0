package shard

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
)

// The ring's names live in internal/naming, the table of every name ork writes. These four
// stay for the engine (internal/run), which has not switched to naming yet.

// SlotLabel is naming.SlotLabel.
const SlotLabel = naming.SlotLabel

// BucketLeaseName is naming.BucketLeaseName.
func BucketLeaseName(name string, i, b int) string { return naming.BucketLeaseName(name, i, b) }

// SlotOf is naming.SlotOf.
func SlotOf(owner types.UID) string { return naming.SlotOf(owner) }

// ValidBuckets is naming.ValidBuckets.
func ValidBuckets(b int) error { return naming.ValidBuckets(b) }
