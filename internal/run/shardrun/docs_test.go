package shardrun_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// yamlBlocks are the ```yaml blocks of a Markdown file.
func yamlBlocks(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		out = append(out, m[1])
	}
	return out
}

// docs/scaling.md's autoscaler is one the apiserver takes (a server-side dry run), scales
// on the metric its adapter rule names, and stops at the B it states.
func TestScalingDocsAutoscalerIsValid(t *testing.T) {
	t.Parallel()
	e := env.Require(t)
	var hpa *autoscalingv2.HorizontalPodAutoscaler
	var metricName string
	for _, b := range yamlBlocks(t, "../../../docs/scaling.md") {
		switch {
		case strings.Contains(b, "kind: HorizontalPodAutoscaler"):
			hpa = &autoscalingv2.HorizontalPodAutoscaler{}
			if err := sigsyaml.UnmarshalStrict([]byte(b), hpa); err != nil {
				t.Fatalf("the autoscaler: %v", err)
			}
		case strings.Contains(b, "metricsQuery"):
			var adapter struct {
				Rules []struct {
					Name struct {
						As string `json:"as"`
					} `json:"name"`
				} `json:"rules"`
			}
			if err := sigsyaml.Unmarshal([]byte(b), &adapter); err != nil || len(adapter.Rules) != 1 {
				t.Fatalf("the adapter rule: %v (%d rules)", err, len(adapter.Rules))
			}
			metricName = adapter.Rules[0].Name.As
		}
	}
	if hpa == nil || metricName == "" {
		t.Fatal("docs/scaling.md has no autoscaler, or no adapter rule")
	}
	if got := hpa.Spec.Metrics[0].Pods.Metric.Name; got != metricName {
		t.Errorf("the autoscaler scales on %q, the adapter serves %q", got, metricName)
	}
	if hpa.Spec.MaxReplicas != 16 {
		t.Errorf("maxReplicas %d, want the B of --shard-buckets 16 the page states", hpa.Spec.MaxReplicas)
	}
	hpa.Namespace = e.Namespace(t)
	if _, err := e.Clientset.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).Create(t.Context(), hpa,
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
		t.Errorf("the apiserver refuses the autoscaler: %v", err)
	}
}
