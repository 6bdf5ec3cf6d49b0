package decision

import (
	"maps"
	"testing"
)

// The inputs digest names related objects by the request's names: one object under its
// name, several each under the name, their namespace and name, so that two selections of
// the same size but other objects digest apart.
func TestRelatedVersionsByTheRequestsNames(t *testing.T) {
	rel := RelatedOf(map[string][]map[string]any{
		"config": {{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "ns", "name": "a", "resourceVersion": "4"}}},
		"peers": {
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "ns", "name": "p2", "resourceVersion": "7"}},
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "ns", "name": "p1", "resourceVersion": "6"}},
		},
	})
	if len(rel) != 3 || rel[1].Ref.Name != "p1" {
		t.Fatalf("RelatedOf = %+v, want three, sorted by name, namespace and name", rel)
	}
	got := RelatedVersions(rel)
	want := map[string]string{"config": "4", "peers/ns/p1": "6", "peers/ns/p2": "7"}
	if !maps.Equal(got, want) {
		t.Errorf("RelatedVersions = %v, want %v", got, want)
	}
}
