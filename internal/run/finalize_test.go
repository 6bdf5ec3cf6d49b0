package run

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/finalizer"
)

func TestOnlyOrkFinalizerChanged(t *testing.T) {
	cr := func(rv string, finalizers []string, spec string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": spec}}}
		u.SetResourceVersion(rv)
		u.SetFinalizers(finalizers)
		return u
	}
	tests := []struct {
		name     string
		a, b     *unstructured.Unstructured
		finalize bool
		want     bool
	}{
		{"ork's added", cr("1", nil, "x"), cr("2", []string{finalizer.Name}, "x"), true, true},
		{"ork's removed, another stays (finalize off)", cr("1", []string{"a.io/x", finalizer.Name}, "x"), cr("2", []string{"a.io/x"}, "x"), false, true},
		{"ork's removed by someone while finalize is on", cr("1", []string{finalizer.Name}, "x"), cr("2", nil, "x"), true, false},
		{"ork's added while finalize is off", cr("1", nil, "x"), cr("2", []string{finalizer.Name}, "x"), false, false},
		{"another's added", cr("1", nil, "x"), cr("2", []string{"a.io/x"}, "x"), true, false},
		{"ork's added and the spec changed", cr("1", nil, "x"), cr("2", []string{finalizer.Name}, "y"), true, false},
		{"nothing changed but the version", cr("1", nil, "x"), cr("2", nil, "x"), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onlyOrkFinalizerChanged(tt.a, tt.b, tt.finalize); got != tt.want {
				t.Errorf("onlyOrkFinalizerChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
