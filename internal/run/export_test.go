package run

import (
	"time"

	"github.com/orkspace/ork/internal/run/relatedwatch"
)

// SetHealthClock makes /healthz judge time by now: a test moves it past the liveness
// bounds instead of waiting minutes.
func SetHealthClock(e *Engine, now func() time.Time) { e.live.SetClock(now) }

// RelatedCheckers is how many digest reads of related objects without a generation run
// at once for one CRD.
const RelatedCheckers = relatedwatch.Checkers
