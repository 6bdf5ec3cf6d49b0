package decision

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
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

// ork's entry of a typical Deployment, digested as the drift test without a call does for
// each child: decoded afresh, and remembered (the same field set on every child of a kind).
func BenchmarkOwnedFieldsDigest(b *testing.B) {
	fields := `{"f:metadata":{"f:annotations":{"f:orkestra.orkspace.io/applied":{},"f:orkestra.orkspace.io/owner":{}},` +
		`"f:labels":{"f:app":{},"f:app.kubernetes.io/managed-by":{},"f:orkestra.orkspace.io/operator":{}},` +
		`"f:ownerReferences":{"k:{\"uid\":\"4f6d0c3e-1b2a-4c5d-9e8f-0a1b2c3d4e5f\"}":{}}},` +
		`"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},` +
		`"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`
	entries := []metav1.ManagedFieldsEntry{{Manager: naming.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}}
	for name, canon := range map[string]*Canon{"decoded": nil, "remembered": {}} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				canon.OwnedFieldsDigest(entries)
			}
		})
	}
}
