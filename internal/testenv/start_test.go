package testenv_test

import (
	"os"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/testenv"
)

func TestStartWithoutBinariesFailsNamingTheMakeTarget(t *testing.T) {
	t.Setenv("ORK_K8S_CACHE", t.TempDir())
	e, err := testenv.Start(t.Context())
	if err == nil {
		_ = e.Stop()
		t.Fatal("Start succeeded without binaries")
	}
	for _, want := range []string{"etcd not found", "make k8s-bin", testenv.SkipEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestK8sVersionIsTheOnePinnedInTheToolsModule(t *testing.T) {
	data, err := os.ReadFile("../../hack/k8s-tools/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		// "require k8s.io/kubernetes v1.37.2" or, inside a require block, "k8s.io/kubernetes v1.37.2".
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == "k8s.io/kubernetes" {
			if f[1] != testenv.K8sVersion {
				t.Errorf("hack/k8s-tools pins %s, testenv.K8sVersion is %s: keep them equal", f[1], testenv.K8sVersion)
			}
			return
		}
	}
	t.Fatal("hack/k8s-tools/go.mod does not require k8s.io/kubernetes")
}
