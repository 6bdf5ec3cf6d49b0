package cli

import (
	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/config"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
)

// nameDefault ends the help of every --name that names the operator.
const nameDefault = " (default the Katalog's metadata.name, else " + naming.DefaultOperator + ")"

// operatorName is --name, else the Katalog's metadata.name (the same in every -f file),
// else naming.DefaultOperator for Katalogs that name none: every command means the same
// operator by it, so that ork run on a cluster and ork bundle's install of the same
// Katalog are one operator, not two in conflict.
func operatorName(cfg *config.Config, set *katalog.Set) (string, error) {
	if n := cfg.String("name"); n != "" {
		return n, nil
	}
	named := false
	for _, f := range set.Files {
		named = named || f.Katalog.Metadata.Name != ""
	}
	if !named {
		return naming.DefaultOperator, nil
	}
	n, err := bundle.DefaultName(set)
	if err != nil {
		return "", usageError("%v: pass --name", err)
	}
	return n, nil
}
