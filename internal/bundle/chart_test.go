package bundle_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/testenv"
)

// helmBin is helm as `make helm-bin` builds it: $ORK_HELM_CACHE, else
// ~/.cache/ork/helm/<the version pinned in hack/helm-tools/go.mod>. Missing, it fails the
// test naming the target; ORK_SKIP_INTEGRATION=1 skips it, as it does the control plane.
func helmBin(t *testing.T) string {
	t.Helper()
	if os.Getenv(testenv.SkipEnv) == "1" {
		t.Skipf("%s=1: needs helm (make helm-bin)", testenv.SkipEnv)
	}
	dir := os.Getenv("ORK_HELM_CACHE")
	if dir == "" {
		gomod, err := os.ReadFile("../../hack/helm-tools/go.mod")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*helm\.sh/helm/v4 (v\S+)`).FindSubmatch(gomod)
		if m == nil {
			t.Fatal("hack/helm-tools/go.mod pins no helm.sh/helm/v4")
		}
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(home, ".cache", "ork", "helm", string(m[1]))
	}
	bin := filepath.Join(dir, "helm")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm not found in %s: run `make helm-bin` (builds it from hack/helm-tools), or set ORK_HELM_CACHE", dir)
	}
	return bin
}

// helm runs helm with a home of its own and returns stdout; a failure fails t.
func helm(t *testing.T, bin string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = []string{"HOME=" + home, "HELM_CACHE_HOME=" + home, "HELM_CONFIG_HOME=" + home, "HELM_DATA_HOME=" + home}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// parseObjects decodes a multi-document YAML stream, skipping empty documents.
func parseObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// byKey indexes objects by kind/namespace/name, through JSON so that numbers compare
// alike whichever decoder read them.
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	m := map[string]any{}
	for _, o := range objs {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		m[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = v
	}
	return m
}

// withoutHelmLabels is o as the bundle has it: Helm's own labels dropped and the bundle's
// managed-by back, after checking the chart set them as Helm does.
func withoutHelmLabels(t *testing.T, o *unstructured.Unstructured, release string) {
	t.Helper()
	l := o.GetLabels()
	if o.GetKind() == "CustomResourceDefinition" { // crds/ is not templated
		return
	}
	want := map[string]string{"app.kubernetes.io/instance": release, "app.kubernetes.io/managed-by": "Helm"}
	for _, k := range bundle.HelmLabels {
		if k == "helm.sh/chart" {
			if !strings.HasSuffix(l[k], "-"+bundle.ChartVersion) {
				t.Errorf("%s %s: label %s=%q, want <chart>-%s", o.GetKind(), o.GetName(), k, l[k], bundle.ChartVersion)
			}
		} else if l[k] != want[k] {
			t.Errorf("%s %s: label %s=%q, want %q", o.GetKind(), o.GetName(), k, l[k], want[k])
		}
		delete(l, k)
	}
	l["app.kubernetes.io/managed-by"] = "ork"
	o.SetLabels(l)
}

// The chart lints, renders, and renders the bundle's own objects (CRDs included, no
// Namespace), whatever values select; parsed objects are compared, not text.
func TestChartRendersTheBundle(t *testing.T) {
	bin := helmBin(t)
	tests := []struct {
		name  string
		files []string
		opts  bundle.Options
		// set are helm --set values; want the options of the bundle they must give, and
		// edit what they change in its ork container.
		set  []string
		want bundle.Options
		edit func(container map[string]any)
	}{
		{name: "remote example, default values", files: []string{remoteExample}},
		{name: "watch namespaces: a Role in each", files: []string{remoteExample},
			opts: bundle.Options{WatchNamespaces: []string{"team-a", "team-b"}}},
		{name: "one replica, no PodDisruptionBudget", files: []string{tlsKatalog},
			opts: bundle.Options{Name: "db-operator", Replicas: 1, ShutdownTimeout: 2 * 60e9}},
		{name: "values for image, replicas and extra args", files: []string{remoteExample, "../../examples/website/katalog.yaml"},
			set:  []string{"replicas=3", "image=registry.example/ork:2.0.0", "extraArgs={--log-format=json,--kube-api-qps=300}"},
			want: bundle.Options{Replicas: 3, Image: "registry.example/ork:2.0.0"},
			edit: func(c map[string]any) {
				c["args"] = append(c["args"].([]any), "--log-format=json", "--kube-api-qps=300")
			}},
		{name: "values for resources", files: []string{remoteExample},
			set: []string{"resources.requests.cpu=250m", "resources.limits.memory=1Gi"},
			edit: func(c map[string]any) {
				res := c["resources"].(map[string]any)
				res["requests"].(map[string]any)["cpu"] = "250m"
				res["limits"].(map[string]any)["memory"] = "1Gi"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const release, ns = "my-release", "ork-chart-test"
			tt.opts.Namespace = ns
			b := generate(t, tt.opts, tt.files...)
			files, err := b.Chart()
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "chart")
			if _, err := bundle.WriteChart(dir, files); err != nil {
				t.Fatal(err)
			}
			lint := helm(t, bin, "lint", "--strict", dir)
			if !strings.Contains(lint, "0 chart(s) failed") {
				t.Errorf("helm lint --strict:\n%s", lint)
			}
			args := []string{"template", release, dir, "--namespace", ns, "--include-crds"}
			for _, s := range tt.set {
				args = append(args, "--set", s)
			}
			rendered := parseObjects(t, []byte(helm(t, bin, args...)))
			for _, o := range rendered {
				withoutHelmLabels(t, o, release)
			}

			wantOpts := tt.opts
			if tt.want.Replicas != 0 {
				wantOpts.Replicas, wantOpts.Image = tt.want.Replicas, tt.want.Image
			}
			want := generate(t, wantOpts, tt.files...)
			var objs []*unstructured.Unstructured
			for _, o := range want.Objects {
				if o.GetKind() == "Namespace" {
					continue
				}
				if o.GetKind() == "Deployment" && tt.edit != nil {
					o = o.DeepCopy()
					cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					tt.edit(cs[0].(map[string]any))
					_ = unstructured.SetNestedSlice(o.Object, cs, "spec", "template", "spec", "containers")
				}
				objs = append(objs, o)
			}
			got, wantByKey := byKey(t, rendered), byKey(t, objs)
			if d := cmp.Diff(wantByKey, got); d != "" {
				t.Errorf("helm template differs from ork bundle (-bundle +chart):\n%s", d)
			}
			if len(got) == 0 {
				t.Error("the chart renders nothing")
			}
		})
	}
}
