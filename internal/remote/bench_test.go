package remote

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

// benchObject is a CR of realistic weight: managedFields from three managers and a
// last-applied annotation (both excluded, as in the seed), a spec and a status.
func benchObject() map[string]any {
	obj := webapp()
	meta := obj["metadata"].(map[string]any)
	var managed []any
	for _, m := range []string{"kubectl-client-side-apply", "orkestra", "kube-controller-manager"} {
		fields := map[string]any{}
		for i := range 20 {
			fields[fmt.Sprintf("f:field%02d", i)] = map[string]any{"f:value": map[string]any{}, ".": map[string]any{}}
		}
		managed = append(managed, map[string]any{
			"manager": m, "operation": "Update", "apiVersion": "myorg.io/v1", "time": "2026-01-02T03:04:05Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": fields},
		})
	}
	meta["managedFields"] = managed
	meta["annotations"].(map[string]any)["kubectl.kubernetes.io/last-applied-configuration"] = strings.Repeat(`{"spec":{"x":1}}`, 40)
	spec := obj["spec"].(map[string]any)
	spec["env"] = map[string]any{"LOG_FORMAT": "json", "REGION": "eu-west-1", "FEATURES": "a,b,c"}
	spec["ports"] = []any{map[string]any{"name": "http", "port": int64(8080)}, map[string]any{"name": "metrics", "port": int64(9090)}}
	obj["status"] = map[string]any{"phase": "Ready", "observedGeneration": int64(3), "conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded", "lastTransitionTime": "2026-01-02T03:04:05Z"},
	}}
	return obj
}

// BenchmarkBuildRequest measures building the PreparedRequest body against two baselines
// measured in the same run: json.Marshal of the whole CR (what sending the cache object as
// is would cost) and json.Marshal of the object as sent (excluded paths already gone: the
// floor for any body that contains it). The buildBody sub-benchmark reports its time and
// allocations as ratios to each ("x-cr-*", "x-sent-*"; 1.0 = as cheap as the baseline).
func BenchmarkBuildRequest(b *testing.B) {
	r := mustNew(b, crd("http://127.0.0.1:1/", func(rem *katalog.Remote) {
		rem.Args = map[string]any{
			"logLevel": "{{ .spec.logLevel }}", "environment": "{{ .spec.environment }}",
			"replicas": "{{ .spec.replicas }}", "name": "{{ .metadata.name }}-svc",
		}
		rem.Payload.Object.Exclude = []string{"metadata.managedFields", `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`}
	}), Options{})
	req := Request{Key: "default/my-webapp", Object: benchObject(), Trigger: TriggerUpdate, Attempt: 1}
	sent := clone(without(req.Object, r.objectExclude))
	marshal := func(v any) func() {
		return func() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	}
	build := func() {
		if _, err := r.buildBody(req); err != nil {
			b.Fatal(err)
		}
	}
	loop := func(f func()) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f()
			}
		}
	}

	// testing.Benchmark cannot run inside a benchmark (it waits for a lock this one holds),
	// so the baselines are sibling sub-benchmarks whose *testing.B is kept for the ratios.
	baselines := []struct {
		name, metric string
		f            func()
		b            *testing.B
	}{
		{name: "baseline=json.Marshal(CR)", metric: "x-cr", f: marshal(req.Object)},
		{name: "baseline=json.Marshal(sent-object)", metric: "x-sent", f: marshal(sent)},
	}
	for i := range baselines {
		bl := &baselines[i]
		b.Run(bl.name, func(b *testing.B) {
			bl.b = b
			loop(bl.f)(b)
		})
	}
	b.Run("buildBody", func(b *testing.B) {
		loop(build)(b)
		perOp := func(b *testing.B) float64 { return float64(b.Elapsed().Nanoseconds()) / float64(b.N) }
		allocs := testing.AllocsPerRun(100, build)
		for _, bl := range baselines {
			if bl.b == nil || bl.b.N == 0 {
				continue // filtered out by -bench
			}
			b.ReportMetric(perOp(b)/perOp(bl.b), bl.metric+"-time")
			b.ReportMetric(allocs/testing.AllocsPerRun(100, bl.f), bl.metric+"-allocs")
		}
	})
}
