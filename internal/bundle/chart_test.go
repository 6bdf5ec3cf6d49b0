package bundle_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
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
	out, err := tryHelm(t, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryHelm runs helm with a home of its own: stdout, or an error carrying its output.
func tryHelm(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = []string{"HOME=" + home, "HELM_CACHE_HOME=" + home, "HELM_CONFIG_HOME=" + home, "HELM_DATA_HOME=" + home}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
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

// asBundle is o as the bundle has it, names and Helm's labels aside: fullname, the
// release's name for every object, becomes name; every label set and selector that carries
// the release's instance loses it and helm.sh/chart, after checking them, and says
// managed-by orkestra where the chart says Helm.
func asBundle(t *testing.T, o *unstructured.Unstructured, release, fullname, name string) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte(`"`+fullname), []byte(`"`+name))
	raw = bytes.ReplaceAll(raw, []byte(`=`+fullname), []byte(`=`+name))
	out := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &out.Object); err != nil {
		t.Fatal(err)
	}
	if o.GetKind() == "CustomResourceDefinition" { // crds/ is not templated
		return out
	}
	labelled := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["app.kubernetes.io/instance"] == release {
				labelled++
				delete(v, "app.kubernetes.io/instance")
				if c, ok := v["helm.sh/chart"]; ok {
					if !strings.HasSuffix(c.(string), "-"+bundle.ChartVersion) {
						t.Errorf("%s %s: label helm.sh/chart=%q, want <chart>-%s", o.GetKind(), o.GetName(), c, bundle.ChartVersion)
					}
					if v["app.kubernetes.io/managed-by"] != "Helm" {
						t.Errorf("%s %s: labels %v, want app.kubernetes.io/managed-by: Helm", o.GetKind(), o.GetName(), v)
					}
					delete(v, "helm.sh/chart")
				}
				if v["app.kubernetes.io/managed-by"] == "Helm" {
					v["app.kubernetes.io/managed-by"] = "orkestra"
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(out.Object)
	if out.GetLabels() == nil || labelled == 0 {
		t.Errorf("%s %s: no labels of release %s", o.GetKind(), o.GetName(), release)
	}
	return out
}

// The chart lints, renders, and renders the bundle's own objects (CRDs included, no
// Namespace), the same objects and specs, names and Helm's labels aside, whatever values
// select; parsed objects are compared, not text.
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
		// mode sets the sharding the values ask for in the bundle they must give.
		mode func(o *bundle.Options)
	}{
		{name: "remote example, default values", files: []string{remoteExample}},
		{name: "watch namespaces: a Role in each", files: []string{remoteExample},
			opts: bundle.Options{WatchNamespaces: []string{"team-a", "team-b"}}},
		{name: "watchNamespaces: a Role in each, merged into ork's and the Secret's own", files: []string{remoteExample},
			set:  []string{"watchNamespaces={team-a,ork-chart-test,default}"},
			mode: func(o *bundle.Options) { o.WatchNamespaces = []string{"default", "ork-chart-test", "team-a"} }},
		{name: "watchNamespaces cleared on a bundle that watched", files: []string{remoteExample},
			opts: bundle.Options{WatchNamespaces: []string{"team-a"}}, set: []string{"watchNamespaces=null"},
			mode: func(o *bundle.Options) { o.WatchNamespaces = nil }},
		{name: "watchNamespaces, sharded", files: []string{remoteExample},
			opts: bundle.Options{ShardBuckets: 4, Replicas: 3}, set: []string{"watchNamespaces={team-b}"},
			mode: func(o *bundle.Options) { o.WatchNamespaces = []string{"team-b"} }},
		{name: "endpoints: ork run --endpoint", files: []string{remoteExample},
			set: []string{"endpoints.webapp=http://webapp-reconciler.apps.svc/reconcile"},
			edit: func(c map[string]any) {
				c["args"] = append(c["args"].([]any), "--endpoint=webapp=http://webapp-reconciler.apps.svc/reconcile")
			}},
		{name: "one replica, no PodDisruptionBudget", files: []string{tlsKatalog},
			opts: bundle.Options{Name: "db-operator", Replicas: 1, ShutdownTimeout: 2 * 60e9}},
		{name: "values for image, replicas and extra args", files: []string{remoteExample, "../../examples/website/katalog.yaml"},
			set:  []string{"replicaCount=3", "image.repository=registry.example/ork", "image.tag=2.0.0", "extraArgs={--kube-api-qps=300}"},
			want: bundle.Options{Replicas: 3, Image: "registry.example/ork:2.0.0"},
			edit: func(c map[string]any) {
				c["args"] = append(c["args"].([]any), "--kube-api-qps=300")
			}},
		{name: "an image of one's own, by digest", files: []string{remoteExample},
			opts: bundle.Options{Image: "registry.example/ork@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}},
		{name: "sharded: the bucket Leases by name, the replicas share the work", files: []string{remoteExample},
			opts: bundle.Options{ShardBuckets: 8, Replicas: 3}},
		{name: "sharding.buckets on a leader-elected bundle", files: []string{remoteExample},
			set: []string{"sharding.buckets=16"}, mode: func(o *bundle.Options) { o.ShardBuckets = 16 }},
		{name: "sharding.buckets=0 on a sharded bundle: one leader", files: []string{remoteExample},
			opts: bundle.Options{ShardBuckets: 4}, set: []string{"sharding.buckets=0"},
			mode: func(o *bundle.Options) { o.ShardBuckets = 0 }},
		{name: "a candidate reconciler: leader election", files: []string{candidateKatalog}},
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
			name := tt.opts.Name
			if name == "" {
				name = rbacgen.DefaultName
			}
			for i, o := range rendered {
				rendered[i] = asBundle(t, o, release, release+"-"+name, name)
			}

			wantOpts := tt.opts
			if tt.want.Replicas != 0 {
				wantOpts.Replicas, wantOpts.Image = tt.want.Replicas, tt.want.Image
			}
			if tt.mode != nil {
				tt.mode(&wantOpts)
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

// chartDir writes the chart of the remote example (a Secret, a reconciler) into a new
// directory.
func chartDir(t *testing.T) string {
	t.Helper()
	files, err := generate(t, bundle.Options{Name: "web-operator"}, remoteExample).Chart()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rendered are the objects of `helm template` by kind (one of each but Roles).
type rendered map[string]*unstructured.Unstructured

func renderChart(t *testing.T, bin, dir string, setJSON ...string) rendered {
	t.Helper()
	args := []string{"template", "rel", dir, "--namespace", "ops"}
	for _, s := range setJSON {
		args = append(args, "--set-json", s)
	}
	out := rendered{}
	for _, o := range parseObjects(t, []byte(helm(t, bin, args...))) {
		out[o.GetKind()] = o
	}
	return out
}

func (r rendered) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if r["Deployment"] == nil {
		t.Fatal("no Deployment rendered")
	}
	toTyped(t, r["Deployment"], &d)
	return &d
}

func subjectName(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
	if len(subjects) != 1 {
		t.Fatalf("%s subjects %v", o.GetKind(), subjects)
	}
	return subjects[0].(map[string]any)["name"].(string)
}

// Each value of the chart changes what it should, and only that: the table sets one (or a
// pair) and checks the rendered objects against the defaults.
func TestChartValues(t *testing.T) {
	bin := helmBin(t)
	dir := chartDir(t)
	def := renderChart(t, bin, dir)
	defPod := def.deployment(t).Spec.Template
	tests := []struct {
		name  string
		set   []string
		check func(t *testing.T, r rendered, d *appsv1.Deployment)
	}{
		{"image.pullPolicy", []string{`image.pullPolicy="Always"`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Spec.Containers[0].ImagePullPolicy; got != corev1.PullAlways {
				t.Errorf("imagePullPolicy %s", got)
			}
		}},
		{"image.tag defaults to appVersion", nil, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/orkspace/ork:1.2.3" {
				t.Errorf("image %s", got)
			}
		}},
		{"imagePullSecrets", []string{`imagePullSecrets=[{"name":"regcred"}]`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Spec.ImagePullSecrets; len(got) != 1 || got[0].Name != "regcred" {
				t.Errorf("imagePullSecrets %v", got)
			}
		}},
		{"replicaCount", []string{`replicaCount=3`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if *d.Spec.Replicas != 3 || r["PodDisruptionBudget"] == nil {
				t.Errorf("replicas %d, PodDisruptionBudget %v", *d.Spec.Replicas, r["PodDisruptionBudget"] != nil)
			}
		}},
		{"replicaCount 1: no PodDisruptionBudget", []string{`replicaCount=1`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if *d.Spec.Replicas != 1 || r["PodDisruptionBudget"] != nil {
				t.Errorf("replicas %d, PodDisruptionBudget %v", *d.Spec.Replicas, r["PodDisruptionBudget"] != nil)
			}
		}},
		{"nodeSelector", []string{`nodeSelector={"disk":"ssd"}`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Spec.NodeSelector; got["disk"] != "ssd" {
				t.Errorf("nodeSelector %v", got)
			}
		}},
		{"tolerations", []string{`tolerations=[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Spec.Tolerations; len(got) != 1 || got[0].Key != "dedicated" {
				t.Errorf("tolerations %v", got)
			}
		}},
		{"affinity", []string{`affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}}`},
			func(t *testing.T, _ rendered, d *appsv1.Deployment) {
				a := d.Spec.Template.Spec.Affinity
				if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key != "zone" {
					t.Errorf("affinity %+v", a)
				}
			}},
		{"podAnnotations", []string{`podAnnotations={"team":"a"}`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			got := d.Spec.Template.Annotations
			if got["team"] != "a" || got[naming.ConfigHashAnnotation] != defPod.Annotations[naming.ConfigHashAnnotation] {
				t.Errorf("pod annotations %v", got)
			}
		}},
		{"podLabels", []string{`podLabels={"team":"a"}`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Labels; got["team"] != "a" || got["app.kubernetes.io/name"] != "web-operator" {
				t.Errorf("pod labels %v", got)
			}
			if _, ok := d.Spec.Selector.MatchLabels["team"]; ok {
				t.Error("podLabels changed the Deployment's selector (immutable: an upgrade would fail)")
			}
		}},
		{"priorityClassName", []string{`priorityClassName="system-cluster-critical"`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if got := d.Spec.Template.Spec.PriorityClassName; got != "system-cluster-critical" {
				t.Errorf("priorityClassName %q", got)
			}
		}},
		{"resources", []string{`resources={"requests":{"cpu":"1"}}`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			res := d.Spec.Template.Spec.Containers[0].Resources
			// Helm merges the value into the default: the rest stays.
			if res.Requests.Cpu().String() != "1" || res.Requests.Memory().String() != bundle.RequestMemory || res.Limits.Memory().String() != bundle.LimitMemory {
				t.Errorf("resources %v", res)
			}
		}},
		{"serviceAccount.create false, a name", []string{`serviceAccount={"create":false,"name":"existing"}`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if r["ServiceAccount"] != nil {
				t.Error("a ServiceAccount is rendered")
			}
			if d.Spec.Template.Spec.ServiceAccountName != "existing" || subjectName(t, r["ClusterRoleBinding"]) != "existing" {
				t.Errorf("the pod runs as %q, the binding binds %q", d.Spec.Template.Spec.ServiceAccountName, subjectName(t, r["ClusterRoleBinding"]))
			}
			if got := r["FlowSchema"].Object["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["subjects"].([]any)[0].(map[string]any)["serviceAccount"].(map[string]any)["name"]; got != "existing" {
				t.Errorf("the FlowSchema matches %v", got)
			}
		}},
		{"serviceAccount.annotations", []string{`serviceAccount.annotations={"eks.amazonaws.com/role-arn":"arn:aws:iam::1:role/ork"}`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if got := r["ServiceAccount"].GetAnnotations(); got["eks.amazonaws.com/role-arn"] != "arn:aws:iam::1:role/ork" {
				t.Errorf("ServiceAccount annotations %v", got)
			}
			if r["ServiceAccount"].GetName() != "rel-web-operator" || d.Spec.Template.Spec.ServiceAccountName != "rel-web-operator" {
				t.Error("the ServiceAccount is not the release's full name by default")
			}
		}},
		{"logLevel and logFormat", []string{`logLevel="debug"`, `logFormat="json"`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			args := d.Spec.Template.Spec.Containers[0].Args
			if !slices.Contains(args, "--log-level=debug") || !slices.Contains(args, "--log-format=json") || slices.Contains(args, "--log-level=info") {
				t.Errorf("args %q", args)
			}
		}},
		{"leaderElection off, one replica", []string{`leaderElection.enabled=false`, `replicaCount=1`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if args := d.Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--leader-elect") {
				t.Errorf("args %q", args)
			}
		}},
		{"metrics.serviceMonitor", []string{`metrics.serviceMonitor={"enabled":true,"interval":"15s","labels":{"release":"prom"}}`}, func(t *testing.T, r rendered, _ *appsv1.Deployment) {
			sm := r["ServiceMonitor"]
			if sm == nil || sm.GetAPIVersion() != "monitoring.coreos.com/v1" {
				t.Fatalf("ServiceMonitor %v", sm)
			}
			sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			for k, v := range sel {
				if r["Service"].GetLabels()[k] != v {
					t.Errorf("the ServiceMonitor selects %s=%s, the Service has %q", k, v, r["Service"].GetLabels()[k])
				}
			}
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if ep := eps[0].(map[string]any); ep["port"] != "metrics" || ep["interval"] != "15s" || sm.GetLabels()["release"] != "prom" {
				t.Errorf("endpoint %v, labels %v", ep, sm.GetLabels())
			}
		}},
		{"flowSchema off", []string{`flowSchema.enabled=false`}, func(t *testing.T, r rendered, _ *appsv1.Deployment) {
			if r["FlowSchema"] != nil {
				t.Error("a FlowSchema is rendered")
			}
		}},
		{"debugDecisions", []string{`debugDecisions.enabled=true`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--debug-decisions") {
				t.Errorf("args %q", args)
			}
		}},
		{"nameOverride", []string{`nameOverride="web"`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if d.Name != "rel-web" || d.Labels["app.kubernetes.io/name"] != "web" || !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--name=rel-web") {
				t.Errorf("Deployment %s, labels %v, args %q", d.Name, d.Labels, d.Spec.Template.Spec.Containers[0].Args)
			}
			if r["ClusterRole"].GetName() != "rel-web" || subjectName(t, r["ClusterRoleBinding"]) != "rel-web" {
				t.Errorf("ClusterRole %s binds %s", r["ClusterRole"].GetName(), subjectName(t, r["ClusterRoleBinding"]))
			}
		}},
		{"fullnameOverride", []string{`fullnameOverride="ops-ork"`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if d.Name != "ops-ork" || r["Service"].GetName() != "ops-ork-metrics" || r["FlowSchema"].GetName() != "ops-ork-leader-election" ||
				d.Spec.Template.Spec.Volumes[0].ConfigMap.Name != "ops-ork" || r["ConfigMap"].GetName() != "ops-ork" {
				t.Errorf("Deployment %s, Service %s, FlowSchema %s", d.Name, r["Service"].GetName(), r["FlowSchema"].GetName())
			}
		}},
		{"selector: name and instance", nil, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			want := map[string]string{"app.kubernetes.io/name": "web-operator", "app.kubernetes.io/instance": "rel"}
			if !maps.Equal(d.Spec.Selector.MatchLabels, want) {
				t.Errorf("Deployment selector %v, want %v", d.Spec.Selector.MatchLabels, want)
			}
			sel, _, _ := unstructured.NestedStringMap(r["Service"].Object, "spec", "selector")
			if !maps.Equal(sel, want) {
				t.Errorf("Service selector %v, want %v", sel, want)
			}
			for k, v := range want {
				if d.Spec.Template.Labels[k] != v {
					t.Errorf("pod label %s=%q, want %q", k, d.Spec.Template.Labels[k], v)
				}
			}
		}},
		{"endpoints", []string{`endpoints={"webapp":"http://webapp.apps.svc:8088/reconcile"}`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--endpoint=webapp=http://webapp.apps.svc:8088/reconcile") {
				t.Errorf("args %q", args)
			}
		}},
		{"watchNamespaces", []string{`watchNamespaces=["b","a","b"]`}, func(t *testing.T, r rendered, d *appsv1.Deployment) {
			args := d.Spec.Template.Spec.Containers[0].Args
			i := slices.Index(args, "--watch-namespace=a")
			if i < 0 || i+1 >= len(args) || args[i+1] != "--watch-namespace=b" || slices.Index(args[i+2:], "--watch-namespace=b") >= 0 {
				t.Errorf("args %q, want --watch-namespace=a and =b once each, sorted", args)
			}
		}},
		{"extraArgs", []string{`extraArgs=["--kube-api-qps=300"]`}, func(t *testing.T, _ rendered, d *appsv1.Deployment) {
			if args := d.Spec.Template.Spec.Containers[0].Args; args[len(args)-1] != "--kube-api-qps=300" {
				t.Errorf("args %q", args)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := renderChart(t, bin, dir, tt.set...)
			tt.check(t, r, r.deployment(t))
		})
	}
	// The defaults: what the table changes is not there by default.
	spec := defPod.Spec
	if spec.NodeSelector != nil || spec.Tolerations != nil || spec.Affinity != nil || spec.PriorityClassName != "" || spec.ImagePullSecrets != nil ||
		def["ServiceMonitor"] != nil || def["FlowSchema"] == nil || slices.Contains(spec.Containers[0].Args, "--debug-decisions") {
		t.Errorf("the defaults set what they should not: %+v", spec)
	}
}

// Helm refuses values the schema does not allow, and more than one replica without leader
// election, before anything is applied.
func TestChartRefusesWrongValues(t *testing.T) {
	bin := helmBin(t)
	dir := chartDir(t)
	tests := []struct {
		name string
		set  []string
		want string
	}{
		{"replicaCount as a string", []string{`replicaCount="two"`}, "replicaCount"},
		{"leaderElection.enabled as a string", []string{`leaderElection={"enabled":"yes"}`}, "leaderElection"},
		{"a logFormat ork has not", []string{`logFormat="xml"`}, "logFormat"},
		{"image.pullPolicy misspelt", []string{`image.pullPolicy="always"`}, "pullPolicy"},
		{"two replicas without leader election", []string{`replicaCount=2`, `leaderElection.enabled=false`},
			"replicaCount > 1 needs leaderElection.enabled: true"},
		{"a bucket count that is not a power of two", []string{`sharding.buckets=3`}, "sharding"},
		{"a key the chart does not know", []string{`replicas=3`}, "replicas"},
		{"an endpoint for a CRD the Katalog has not", []string{`endpoints={"other":"http://x/reconcile"}`}, "other"},
		{"an endpoint that is no URL", []string{`endpoints={"webapp":"webapp:8088"}`}, "webapp"},
		{"a watch namespace that is no DNS label", []string{`watchNamespaces=["Team_A"]`}, "watchNamespaces"},
		{"a full name that is no DNS-1035 label", []string{`fullnameOverride="1ork"`}, "fullnameOverride"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"template", "rel", dir, "--namespace", "ops"}
			for _, s := range tt.set {
				args = append(args, "--set-json", s)
			}
			_, err := tryHelm(t, bin, args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm template: %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

// A chart of a Katalog that rolls out a candidate reconciler refuses sharding.buckets, as
// ork run refuses --shard-buckets for it; leader election still renders.
func TestChartRefusesShardingACandidate(t *testing.T) {
	bin := helmBin(t)
	files, err := generate(t, bundle.Options{}, candidateKatalog).Chart()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatal(err)
	}
	if _, err := tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops"); err != nil {
		t.Fatalf("default values: %v", err)
	}
	_, err = tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops", "--set", "sharding.buckets=4")
	if err == nil || !strings.Contains(err.Error(), "reconcile.remote.candidate") {
		t.Errorf("helm template --set sharding.buckets=4: %v, want an error naming reconcile.remote.candidate", err)
	}
}

// NOTES.txt says what is left to do: the token Secret, the reconciler, a kubectl wait; and,
// with debugDecisions, that the endpoint is unauthenticated. Text from the Katalog is
// printed as it is, never evaluated by Helm.
func TestChartNotes(t *testing.T) {
	bin := helmBin(t)
	dir := chartDir(t)
	notes := func(set ...string) string {
		args := []string{"install", "rel", dir, "--namespace", "ops", "--dry-run=client"}
		for _, s := range set {
			args = append(args, "--set-json", s)
		}
		out := helm(t, bin, args...)
		_, n, ok := strings.Cut(out, "NOTES:")
		if !ok {
			t.Fatalf("no NOTES in:\n%s", out)
		}
		return n
	}
	got := notes()
	for _, want := range []string{
		"kubectl -n default create secret generic my-reconciler-token --from-literal=token=<token>",
		"deploy its reconciler, serving http://127.0.0.1:8088/reconcile",
		"kubectl wait --for=condition=Ready webapps.myorg.io/<name> -n <namespace>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("NOTES lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "WITHOUT AUTHENTICATION") {
		t.Errorf("NOTES warn of debugDecisions, which is off:\n%s", got)
	}
	if got := notes(`debugDecisions.enabled=true`); !strings.Contains(got, "WITHOUT AUTHENTICATION") {
		t.Errorf("NOTES do not warn that debugDecisions is unauthenticated:\n%s", got)
	}
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(values), "UNAUTHENTICATED") {
		t.Error("values.yaml does not say debugDecisions is unauthenticated")
	}
}

// The chart's upgrade path for CRDs (docs/install.md): Helm installs crds/ once and never
// upgrades them; `kubectl apply --server-side --force-conflicts -f <chart>/crds/` does,
// where an apply without --force-conflicts would stop on the fields Helm wrote.
func TestChartUpgradePathForCRDs(t *testing.T) {
	env.Require(t)
	bin := helmBin(t)
	t.Parallel()
	src := t.TempDir()
	name := uniq("ork-chart")
	group := name + ".example.com"
	set := load(t, testKatalog(t, src, group, "https://reconciler.example.com/reconcile", ""))
	b, err := bundle.Generate(set, bundle.Options{Name: name, Namespace: name, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := b.YAML()
	if err != nil {
		t.Fatal(err)
	}
	cleanupBundle(t, manifest) // the chart's cluster-wide objects and CRD, by the bundle's names
	dir := filepath.Join(t.TempDir(), "chart")
	write := func(b *bundle.Bundle) {
		files, err := b.Chart()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bundle.WriteChart(dir, files); err != nil {
			t.Fatal(err)
		}
	}
	write(b)
	kube := []string{"--kubeconfig", env.Kubeconfig, "-n", name}
	helm(t, bin, append([]string{"install", name, dir, "--create-namespace"}, kube...)...)
	crd := "crd/apps." + group
	columns := func() string {
		return env.Kubectl(t, nil, "get", crd, "-o", "jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}")
	}

	// The Katalog's CRD gains a printer column; the chart is regenerated and upgraded.
	crdPath := filepath.Join(src, "crd.yaml")
	data, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("      subresources: {status: {}}\n"),
		[]byte("      subresources: {status: {}}\n      additionalPrinterColumns:\n        - {name: Size, type: string, jsonPath: .spec.size}\n"), 1)
	if err := os.WriteFile(crdPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	b2, err := bundle.Generate(load(t, filepath.Join(src, "katalog.yaml")), bundle.Options{Name: name, Namespace: name, Version: "1.2.3", ChartVersion: "0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	write(b2)
	helm(t, bin, append([]string{"upgrade", name, dir}, kube...)...)
	if got := columns(); strings.Contains(got, "Size") {
		t.Fatalf("helm upgrade changed the CRD (columns %q): the documented path is not needed", got)
	}
	crds := filepath.Join(dir, "crds")
	if out, err := testenvKubectlOut(t.Context(), "apply", "--server-side", "-f", crds); err == nil || !strings.Contains(out, "conflict") {
		t.Errorf("kubectl apply --server-side without --force-conflicts: %v, want a conflict with Helm's fields:\n%s", err, out)
	}
	env.Kubectl(t, nil, "apply", "--server-side", "--force-conflicts", "-f", crds)
	if got := columns(); got != "Size" {
		t.Errorf("after kubectl apply --server-side --force-conflicts -f crds/: printer columns %q, want Size", got)
	}
	helm(t, bin, append([]string{"uninstall", name}, kube...)...)
}

// Katalog text in NOTES.txt (here a Secret name that is itself a template) is printed as it
// is: Helm never evaluates it.
func TestChartNotesPrintKatalogTextAsItIs(t *testing.T) {
	bin := helmBin(t)
	src := t.TempDir()
	path := testKatalog(t, src, "notes.example.com", "https://reconciler.example.com/reconcile", "")
	k, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k = bytes.Replace(k, []byte("secretRef: {name: reconciler-token, key: token}"),
		[]byte(`secretRef: {name: "{{ .metadata.name }}-token", key: token}`), 1)
	if err := os.WriteFile(path, k, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := generate(t, bundle.Options{Name: "notes"}, path).Chart()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatal(err)
	}
	out := helm(t, bin, "install", "rel", dir, "--namespace", "ops", "--dry-run=client")
	for _, want := range []string{
		"kubectl -n ops create secret generic {{ .metadata.name }}-token --from-literal=token=<token>",
		"(the name is a template, rendered for each custom resource)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("NOTES lack %q:\n%s", want, out)
		}
	}
}

// A chart generated by an ork that is no release has no image to default to: the schema
// requires image.repository and image.tag, and with them set it renders.
func TestChartWithoutImageRequiresIt(t *testing.T) {
	bin := helmBin(t)
	b, err := bundle.Generate(load(t, remoteExample), bundle.Options{Version: "dev", ChartOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	files, err := b.Chart()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatal(err)
	}
	if _, err := tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops"); err == nil || !strings.Contains(err.Error(), "repository") {
		t.Errorf("helm template without image values: %v, want an error naming image.repository", err)
	}
	if _, err := tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops", "--set", "image.repository=registry.example/ork"); err == nil || !strings.Contains(err.Error(), "tag") {
		t.Errorf("helm template without image.tag: %v, want an error naming image.tag", err)
	}
	r := renderChart(t, bin, dir, `image={"repository":"registry.example/ork","tag":"1.0.0"}`)
	if got := r.deployment(t).Spec.Template.Spec.Containers[0].Image; got != "registry.example/ork:1.0.0" {
		t.Errorf("image %q", got)
	}
	if _, err := bundle.Generate(load(t, remoteExample), bundle.Options{Version: "dev"}); err == nil {
		t.Error("the manifests of an ork that is no release got an image")
	}
}

// A Katalog with a cluster-scoped CRD cannot be limited to namespaces: the chart refuses
// watchNamespaces, as ork run refuses --watch-namespace, and renders without it.
func TestChartRefusesWatchNamespacesForAClusterScopedCRD(t *testing.T) {
	bin := helmBin(t)
	files, err := generate(t, bundle.Options{}, "../../examples/cluster-scoped/katalog.yaml").Chart()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "chart")
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatal(err)
	}
	if _, err := tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops"); err != nil {
		t.Fatalf("default values: %v", err)
	}
	_, err = tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops", "--set", "watchNamespaces={team-a}")
	if err == nil || !strings.Contains(err.Error(), "watchNamespaces: ") || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("helm template --set watchNamespaces={team-a}: %v, want an error naming the cluster-scoped CRD", err)
	}
}
