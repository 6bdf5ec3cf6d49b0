// Package rolloutrun_test runs the end-to-end tests of rolling out a new reconciler
// (shadow, canary, rollback, resume after a restart) against a real kube-apiserver of its
// own. They live apart from internal/run's tests so that their test binary runs beside
// internal/run's, the longest of make test.
package rolloutrun_test

import (
	"os"
	"testing"

	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
