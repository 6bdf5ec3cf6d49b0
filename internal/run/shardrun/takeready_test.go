package shardrun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// A replica that takes buckets passes their CRs only once its child caches show the
// buckets' children: every call it makes for a CR that has a child sends that child in
// prepared.children. Its CR cache and each child cache relist after a take on their own
// back-off; a pass run on the CR cache's list alone would send none, and a reconciler that
// re-creates what it does not see could make a new Secret and overwrite its data.
func TestTakePassesSeeTheBucketsChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.remoteOption("payload: {children: {enabled: true}}")
	const b, n = 16, 64
	want, uids := map[string]string{}, map[string]types.UID{}
	for _, cr := range f.create(n, "1") {
		want[cr.GetName()], uids[cr.GetName()] = "1", cr.GetUID()
	}
	f.sharded("a", b, "--endpoint", f.via("a"))
	f.waitConverged("every widget reconciled by a", leaseDuration+slack, want)
	f.childrenConverged("every widget has its child", slack, want, uids)

	// c joins, then d: each time the others hand buckets back, and the newcomer passes
	// each of their CRs once. Two joins: two takes whose caches may race.
	var pods []string
	for _, pod := range []string{"a", "c", "d"} {
		pods = append(pods, pod)
		if pod == "a" {
			continue
		}
		before := len(f.ep.Calls())
		f.sharded(pod, b, "--endpoint", f.via(pod))
		f.tookWithChildren(pod, f.settled(2*leaseDuration+slack, b, pods...), before, b, uids)
	}
}

// tookWithChildren waits until pod has called for each CR of the buckets it holds (holders)
// since the calls[before:], and checks that each of those calls sent the CR's ConfigMap in
// prepared.children.
func (f *fixture) tookWithChildren(pod string, holders map[int]string, before, b int, uids map[string]types.UID) {
	f.t.Helper()
	owed := 0
	for _, uid := range uids {
		if holders[shard.BucketOf(uid, b)] == pod {
			owed++
		}
	}
	if owed == 0 {
		f.t.Fatalf("%s holds no bucket with a CR: %v", pod, holders)
	}
	testkit.Eventually(f.t, pod+" passed each CR of the buckets it took", 100*time.Millisecond, slack, func(context.Context) (bool, error) {
		called := map[string]bool{}
		for _, c := range f.ep.Calls()[before:] {
			if c.Header.Get(replicaHeader) == pod {
				called[c.Key] = true
			}
		}
		if len(called) < owed {
			return false, fmt.Errorf("%s called for %d CRs, its buckets have %d", pod, len(called), owed)
		}
		return true, nil
	})
	for _, c := range f.ep.Calls()[before:] {
		if c.Header.Get(replicaHeader) != pod {
			continue
		}
		prepared, _ := c.Body["prepared"].(map[string]any)
		children, _ := prepared["children"].(map[string]any)
		name, seen := c.Key[strings.Index(c.Key, "/")+1:], false
		for _, byName := range children { // one entry per child type: the ConfigMaps'
			objs, _ := byName.(map[string]any)
			_, ok := objs[name]
			seen = seen || ok
		}
		if !seen {
			f.t.Errorf("%s's call for %s (trigger %s) sent prepared.children %v: its ConfigMap %s is missing", pod, c.Key, c.Trigger, children, name)
		}
	}
}
