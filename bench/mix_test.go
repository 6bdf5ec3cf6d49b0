package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRequestMixIsPerCRWithoutTheHarness(t *testing.T) {
	n := 100
	delta := requestCounts{
		"POST apps":         100, // the harness's creates: not the system's
		"POST deployments":  100,
		"POST services":     100,
		"PATCH apps/status": 100,
		"POST events":       100,
		"GET deployments":   0.3, // below the noise line
		"LIST apps":         2,   // informers, the harness's watch
		"WATCH services":    1,
		"GET ":              50, // /metrics: no resource
		"GET /openapi/v3":   1,
		"APPLY configmaps":  250, // 2.5 per CR
	}
	got := requestMix(delta, workloads["default"], n)
	want := map[string]float64{"POST deployments": 1, "POST services": 1, "PATCH apps/status": 1, "POST events": 1, "APPLY configmaps": 2.5}
	if len(got) != len(want) {
		t.Fatalf("mix = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("mix[%q] = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

func TestMixTableShowsEveryKindForEverySystem(t *testing.T) {
	rs := []result{
		{System: "ceiling-a-32", RequestsPerCR: map[string]float64{"APPLY deployments": 1, "APPLY services": 1, "PATCH apps/status": 1}},
		{System: "ceiling-b", RequestsPerCR: map[string]float64{"POST deployments": 1, "POST services": 1, "PATCH apps/status": 1, "POST events": 1}},
	}
	var b bytes.Buffer
	mixTable(&b, rs)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"| system | APPLY deployments | APPLY services | PATCH apps/status | POST deployments | POST events | POST services | total |",
		"|---|---|---|---|---|---|---|---|",
		"| ceiling-a-32 | 1.00 | 1.00 | 1.00 | — | — | — | 3.00 |",
		"| ceiling-b | — | — | 1.00 | 1.00 | 1.00 | 1.00 | 4.00 |",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
}
