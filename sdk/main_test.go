package sdk

import (
	"os"
	"testing"

	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

// env is the control plane the SDK examples converge on (converge_test.go).
var env *testenv.Env

// bins builds ork once per test binary; TestMain removes it.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(testenv.Main(m, &env))) }
