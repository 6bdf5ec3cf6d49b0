// Package validate checks the semantics of a loaded Katalog (SPEC §5) and returns every
// problem as a located Finding; it never prints.
package validate

import (
	"fmt"

	"github.com/orkspace/ork/internal/katalog"
)

// Katalog runs every semantic rule over set and returns all findings, sorted. Structural
// findings from katalog.Load are not repeated here.
func Katalog(set *katalog.Set) []katalog.Finding {
	var out []katalog.Finding
	for _, c := range set.CRDs {
		out = append(out, remoteRequiresDefaultOff(c)...)
	}
	katalog.SortFindings(out)
	return out
}

// remoteRequiresDefaultOff is the seed's rule: reconcile.remote needs reconcile.default: false,
// and an absent default counts as true.
func remoteRequiresDefaultOff(c *katalog.CRD) []katalog.Finding {
	r := c.OperatorBox.Reconcile
	if r.Remote == nil || !r.DefaultEnabled() {
		return nil
	}
	at := katalog.CRDPath(c.Name, "operatorBox.reconcile.remote")
	if r.Default != nil {
		at = katalog.CRDPath(c.Name, "operatorBox.reconcile.default")
	}
	return []katalog.Finding{c.Source.Finding(katalog.SeverityError, at,
		fmt.Sprintf("CRD %q: reconcile.remote requires reconcile.default: false", c.Name),
		"set `reconcile.default: false` so the built-in declarative reconciler does not also run")}
}
