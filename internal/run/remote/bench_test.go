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

// BenchmarkBuildRequest measures building the PreparedRequest body and reports it against
// a baseline measured in the same run: json.Marshal of the same CR, the least any encoding
// of the object costs. "x-baseline" metrics are the ratios (1.0 = as cheap as the baseline).
func BenchmarkBuildRequest(b *testing.B) {
	r := mustNew(b, crd("http://127.0.0.1:1/", func(rem *katalog.Remote) {
		rem.Args = map[string]any{
			"logLevel": "{{ .spec.logLevel }}", "environment": "{{ .spec.environment }}",
			"replicas": "{{ .spec.replicas }}", "name": "{{ .metadata.name }}-svc",
		}
		rem.Payload.Object.Exclude = []string{"metadata.managedFields", `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`}
	}), Options{})
	req := Request{Key: "default/my-webapp", Object: benchObject(), Trigger: TriggerUpdate, Attempt: 1}
	build := func() {
		if _, err := r.buildBody(req); err != nil {
			b.Fatal(err)
		}
	}
	baseline := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(req.Object); err != nil {
				b.Fatal(err)
			}
		}
	})
	buildAllocs := testing.AllocsPerRun(100, build)

	b.ReportAllocs()
	for b.Loop() {
		build()
	}
	nsPerOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(float64(baseline.NsPerOp()), "baseline-ns/op")
	b.ReportMetric(float64(baseline.AllocsPerOp()), "baseline-allocs/op")
	b.ReportMetric(nsPerOp/float64(baseline.NsPerOp()), "x-baseline-time")
	b.ReportMetric(buildAllocs/float64(baseline.AllocsPerOp()), "x-baseline-allocs")
}
