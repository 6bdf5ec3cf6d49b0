package decision

import (
	"fmt"
	"testing"
)

// A Deployment of a typical size: the cost the log adds per written child.
func BenchmarkFieldPaths(b *testing.B) {
	deploy := func(image string) map[string]any {
		var containers []any
		for i := range 3 {
			var env []any
			for j := range 20 {
				env = append(env, map[string]any{"name": fmt.Sprintf("VAR_%d", j), "value": fmt.Sprintf("value-%d", j)})
			}
			containers = append(containers, map[string]any{"name": fmt.Sprintf("c%d", i), "image": image, "env": env,
				"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}}})
		}
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": containers}}}}
	}
	before, after := deploy("nginx:1"), deploy("nginx:2")
	b.ReportAllocs()
	for b.Loop() {
		FieldPaths(before, after)
	}
}
