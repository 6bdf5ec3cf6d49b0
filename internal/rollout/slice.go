package rollout

import (
	"hash/fnv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/naming"
)

// sliceSpace is the resolution of the canary slice: steps are whole percents, so 10,000
// slots give each percent 100 of them.
const sliceSpace = 10000

// InCanary reports whether the CR with uid belongs to the canary slice at percent (0–100).
// The hash is salted with "canary:" so that the slice does not follow the sharding buckets,
// which hash the bare uid: a canary step must not land on one replica's CRs only. A CR in
// the slice at one step is in it at every larger step, so growing the slice never moves a
// CR back to stable.
func InCanary(uid types.UID, percent int) bool {
	return slot(uid) < uint64(max(percent, 0))*(sliceSpace/100)
}

func slot(uid types.UID) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("canary:"))
	_, _ = h.Write([]byte(uid))
	return h.Sum64() % sliceSpace
}

// Side is the reconciler a CR's pass goes to for real.
type Side string

// The two sides of a rollout; metrics carry them as side=stable|candidate.
const (
	Stable    Side = "stable"
	Candidate Side = "candidate"
)

// PinAnnotation is naming.PinAnnotation, kept here for the engine (internal/run).
const PinAnnotation = naming.PinAnnotation

// SideOf is the side a CR's pass goes to at percent: its pin when the annotation names a
// side, else the canary slice. pinErr is set for any other value of the annotation, which is
// then ignored (the engine says so once with a Warning Event).
func SideOf(uid types.UID, annotations map[string]string, percent int) (side Side, pinErr bool) {
	switch v, ok := annotations[PinAnnotation]; {
	case !ok:
	case Side(v) == Stable || Side(v) == Candidate:
		return Side(v), false
	default:
		pinErr = true
	}
	if InCanary(uid, percent) {
		return Candidate, pinErr
	}
	return Stable, pinErr
}
