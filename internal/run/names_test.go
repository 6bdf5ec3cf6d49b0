package run_test

import (
	"testing"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run"
)

// The engine's names are the naming table's (internal/naming, docs/naming.md) until the
// engine takes them from there: a name written twice must not drift.
func TestEngineNamesAreTheNamingTable(t *testing.T) {
	for _, tc := range []struct{ engine, table string }{
		{run.FieldManager, naming.FieldManager},
		{run.ManagedByLabel, naming.ManagedByLabel},
		{run.ManagedByValue, naming.ManagedBy},
		{run.OperatorLabel, naming.OperatorLabel},
		{run.OwnerAnnotation, naming.OwnerAnnotation},
		{run.PruneAnnotation, naming.PruneAnnotation},
		{run.SuspendAnnotation, naming.SuspendAnnotation},
		{run.SuspendValue, naming.SuspendValue},
	} {
		if tc.engine != tc.table {
			t.Errorf("the engine writes %q where internal/naming says %q", tc.engine, tc.table)
		}
	}
}
