package shardrun_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/testkit"
)

// A ring that ran under the old default name (the Katalog names none: orkestra) and starts
// again under another --name takes its children: each take relabels its bucket's children
// for the new name, so the ring's caches see them and its applies are no OperatorConflict.
func TestRenamedRingTakesItsDefaultNamedChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const b, n = 4, 6
	want := map[string]string{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()] = "1"
	}
	old := f.sharded("old", b, "--endpoint", f.via("old"))
	f.waitConverged("the ring named orkestra reconciles every widget", leaseDuration+slack, want)
	if err := old.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-old.Exited()

	f.sharded("new", b, "--name", "my-operator", "--endpoint", f.via("new"))
	for name := range want {
		f.setV(name, "2")
		want[name] = "2"
	}
	f.waitConverged("the ring named my-operator reconciles every widget", leaseDuration+slack, want)
	testkit.Eventually(t, "every child relabelled and written by the ring named my-operator", 100*time.Millisecond, slack,
		func(ctx context.Context) (bool, error) {
			for name := range want {
				cm, err := env.Clientset.CoreV1().ConfigMaps(f.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if op := cm.Labels[naming.OperatorLabel]; op != "my-operator" || cm.Data["v"] != "2" {
					return false, fmt.Errorf("ConfigMap %s: %s=%q, data.v %q; want my-operator, 2", name, naming.OperatorLabel, op, cm.Data["v"])
				}
			}
			return true, nil
		})
}
