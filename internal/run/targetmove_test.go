package run

import (
	"testing"

	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/target"
)

// The status key the engine records a CR's targets under is the one the status patch keeps
// an answer from writing (crstatus may not import target).
func TestTheTargetsRecordIsOneKey(t *testing.T) {
	if crstatus.TargetsField != target.StatusField {
		t.Errorf("crstatus.TargetsField %q, target.StatusField %q", crstatus.TargetsField, target.StatusField)
	}
}
