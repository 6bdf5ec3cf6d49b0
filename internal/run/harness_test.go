package run_test

import (
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

var env *testenv.Env

// bins builds ork and the example reconciler once per test binary; TestMain removes them.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(testenv.Main(m, &env))) }

// The harness's types under the short names every e2e test of this package uses.
type (
	call     = runtest.Call
	response = runtest.Response
	endpoint = runtest.Endpoint
)

// fixture is runtest's Fixture, with the helpers only this package's tests share added as
// methods in their files.
type fixture struct{ *runtest.Fixture }

func newFixture(t testing.TB) *fixture { return &fixture{runtest.NewFixture(t, env)} }

// newFixtureWith is newFixture with a variant of the App CRD.
func newFixtureWith(t testing.TB, o runtest.CRDOptions) *fixture {
	return &fixture{runtest.NewFixtureWith(t, env, t.Name(), o)}
}

// newFixtureID is newFixture for several fixtures in one test or benchmark: id picks the
// CRD group.
func newFixtureID(t testing.TB, id string) *fixture {
	return &fixture{runtest.NewFixtureWith(t, env, id, runtest.CRDOptions{})}
}

var (
	createOpts = metav1.CreateOptions{}
	getOpts    = metav1.GetOptions{}
)
