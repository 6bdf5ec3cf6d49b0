package main

import (
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/resources"
)

func TestWorkloadAnswersBuild(t *testing.T) {
	for _, tc := range []struct {
		workload string
		want     map[string]int // resource -> children per CR
	}{
		{"default", map[string]int{"deployments": 1, "services": 1}},
		{"fanout10", map[string]int{"configmaps": 10}},
		{"fanout20", map[string]int{"configmaps": 20}},
		{"multicrd", map[string]int{"deployments": 1, "services": 1}},
		{"startup", map[string]int{"deployments": 1, "services": 1}},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			w := workloads[tc.workload]
			got := map[string]int{}
			names := map[string]bool{}
			for _, raw := range w.answer("app-00007")["resources"].([]any) {
				o, err := resources.Build(raw.(map[string]any), resources.OptionsFor("bench", "app-00007"))
				if err != nil {
					t.Fatalf("build: %v", err)
				}
				gvr := o.Type.GVR()
				got[gvr.Resource]++
				if !w.isReconcileWrite(gvr.Resource) {
					t.Errorf("%s is not counted as a reconcile write", gvr.Resource)
				}
				key := gvr.Resource + "/" + o.Obj.GetName()
				if names[key] {
					t.Errorf("%s answered twice", key)
				}
				names[key] = true
			}
			if len(got) != len(tc.want) {
				t.Fatalf("children = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("children = %v, want %v", got, tc.want)
				}
			}
			katalog := w.katalog("http://127.0.0.1:1/")
			for _, m := range w.managed() {
				if !strings.Contains(katalog, "plural: "+m.plural+"}") {
					t.Errorf("the Katalog does not declare %s:\n%s", m.plural, katalog)
				}
			}
		})
	}
}

func TestMultiCRDSplitsNAcrossThreeCRDs(t *testing.T) {
	w := workloads["multicrd"]
	n := 1000
	total := 0
	for _, k := range w.kinds {
		c := crsOf(w, k.plural, n)
		if c < 333 || c > 334 {
			t.Errorf("%s gets %d of %d CRs, want 333 or 334", k.plural, c, n)
		}
		total += c
		if !strings.Contains(w.katalog("http://x/"), "kind: "+k.kind+",") {
			t.Errorf("the Katalog has no CRD of kind %s", k.kind)
		}
	}
	if total != n {
		t.Errorf("the CRDs get %d CRs in all, want %d", total, n)
	}
}
