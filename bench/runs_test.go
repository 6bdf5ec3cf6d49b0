package main

import (
	"slices"
	"testing"
)

func TestSystemsMeasureEveryCeilingFirst(t *testing.T) {
	got, err := expandSystems([]string{"ork", "ceiling-b", "controller-runtime-32", "ceiling"}, []int{32, 64})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.name)
	}
	want := []string{"ceiling-a-32", "ceiling-a-64", "ceiling-b", "ork", "controller-runtime-32"}
	if !slices.Equal(names, want) {
		t.Fatalf("systems = %v, want %v", names, want)
	}
	if got[1].workers != 64 || got[4].workers != 32 {
		t.Errorf("workers: %+v", got)
	}
	if _, err := expandSystems([]string{"kubebuilder"}, []int{32}); err == nil {
		t.Error("an unknown system was accepted")
	}
}

func TestTheOperatorAnswersTheDefaultWorkloadOnly(t *testing.T) {
	op := system{name: "controller-runtime-32", kind: kindOperator, workers: 32}
	for name, want := range map[string]bool{"default": true, "fanout10": false, "multicrd": false, "startup": false} {
		if got := supports(op, workloads[name]); got != want {
			t.Errorf("operator on %s: %v, want %v", name, got, want)
		}
	}
	if supports(system{name: "ceiling-a-32", kind: kindCeilingA}, workloads["startup"]) {
		t.Error("a ceiling runs the startup workload")
	}
	if !supports(system{name: "ork-before", kind: kindOrkBefore}, workloads["startup"]) ||
		supports(system{name: "ork-before", kind: kindOrkBefore}, workloads["default"]) {
		t.Error("ork-before runs the startup workload only")
	}
}
