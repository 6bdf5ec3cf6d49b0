package remotecheck

import (
	"os"
	"testing"

	"github.com/orkspace/ork/internal/testkit"
)

// bins builds each binary the tests run once per test binary; TestMain removes them.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(m.Run())) }
