package bundle_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
	"github.com/orkspace/ork/internal/validate"
)

const (
	remoteExample = "../../examples/remote/katalog.yaml"
	tlsKatalog    = "testdata/tls/katalog.yaml"
	// candidateKatalog rolls out a candidate reconciler, which sharding refuses.
	candidateKatalog = "testdata/candidate/katalog.yaml"
)

// load reads Katalogs that must be valid.
func load(t *testing.T, files ...string) *katalog.Set {
	t.Helper()
	set, findings, err := katalog.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	findings = append(findings, validate.Katalog(set)...)
	if katalog.HasErrors(findings) {
		t.Fatalf("%v do not validate: %+v", files, findings)
	}
	return set
}

func generate(t *testing.T, opts bundle.Options, files ...string) *bundle.Bundle {
	t.Helper()
	if opts.Version == "" {
		opts.Version = "1.2.3"
	}
	b, err := bundle.Generate(load(t, files...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		opts  bundle.Options
		json  bool
	}{
		{name: "remote", files: []string{remoteExample}},
		{name: "remote", files: []string{remoteExample}, json: true},
		{name: "tls-one-replica", files: []string{tlsKatalog},
			opts: bundle.Options{Name: "db-operator", Namespace: "ops", Replicas: 1, Image: "registry.example/ork:test",
				ShutdownTimeout: 90 * time.Second}},
		{name: "two-files", files: []string{remoteExample, "../../examples/website/katalog.yaml"}, opts: bundle.Options{Replicas: 3}},
		{name: "sharded", files: []string{remoteExample}, opts: bundle.Options{Replicas: 3, ShardBuckets: 4}},
	}
	for _, tt := range tests {
		ext := ".golden.yaml"
		if tt.json {
			ext = ".golden.json"
		}
		t.Run(tt.name+ext, func(t *testing.T) {
			b := generate(t, tt.opts, tt.files...)
			encode := b.YAML
			if tt.json {
				encode = b.JSON
			}
			got, err := encode()
			if err != nil {
				t.Fatal(err)
			}
			again, err := encode()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(again) {
				t.Error("two encodings of one bundle differ")
			}
			if other, _ := encodeOf(generate(t, tt.opts, tt.files...), tt.json); string(other) != string(got) {
				t.Error("two bundles of the same input differ")
			}
			golden.Assert(t, filepath.Join("testdata", tt.name+ext), got)
		})
	}
}

// A bundle that ork run would refuse at start is refused: a bucket count ork does not take,
// sharding a Katalog that rolls out a candidate reconciler.
func TestShardBucketsAreChecked(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		buckets int
		want    string
	}{
		{"not a power of two", remoteExample, 3, "shard-buckets"},
		{"past 256", remoteExample, 512, "shard-buckets"},
		{"a candidate reconciler", candidateKatalog, 4, "reconcile.remote.candidate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bundle.Generate(load(t, tt.file), bundle.Options{Version: "1.2.3", ShardBuckets: tt.buckets})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Generate: %v, want an error naming %q", err, tt.want)
			}
		})
	}
	if _, err := bundle.Generate(load(t, candidateKatalog), bundle.Options{Version: "1.2.3"}); err != nil {
		t.Errorf("the candidate Katalog without sharding: %v", err)
	}
}

func encodeOf(b *bundle.Bundle, json bool) ([]byte, error) {
	if json {
		return b.JSON()
	}
	return b.YAML()
}

// kinds lists "Kind/name" of the objects, in order.
func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestApplyOrderAndDisruptionBudget(t *testing.T) {
	tests := []struct {
		name string
		opts bundle.Options
		want []string
	}{
		{
			name: "two replicas by default: a PodDisruptionBudget",
			want: []string{"Namespace/orkestra-system", "CustomResourceDefinition/webapps.myorg.io", "ServiceAccount/orkestra",
				"ClusterRole/orkestra", "ClusterRoleBinding/orkestra",
				// The Secret's Role in default, the Lease's in ork's namespace.
				"Role/orkestra", "RoleBinding/orkestra", "Role/orkestra", "RoleBinding/orkestra",
				"ConfigMap/orkestra", "Deployment/orkestra",
				"Service/orkestra-metrics", "PodDisruptionBudget/orkestra", "FlowSchema/orkestra-leader-election"},
		},
		{
			name: "one replica: no PodDisruptionBudget, it would block every drain",
			opts: bundle.Options{Replicas: 1},
			want: []string{"Namespace/orkestra-system", "CustomResourceDefinition/webapps.myorg.io", "ServiceAccount/orkestra",
				"ClusterRole/orkestra", "ClusterRoleBinding/orkestra",
				// The Secret's Role in default, the Lease's in ork's namespace.
				"Role/orkestra", "RoleBinding/orkestra", "Role/orkestra", "RoleBinding/orkestra",
				"ConfigMap/orkestra", "Deployment/orkestra",
				"Service/orkestra-metrics", "FlowSchema/orkestra-leader-election"},
		},
		{
			name: "a namespace that always exists is not declared",
			opts: bundle.Options{Namespace: "kube-system", Name: "ork"},
			want: []string{"CustomResourceDefinition/webapps.myorg.io", "ServiceAccount/ork",
				"ClusterRole/ork", "ClusterRoleBinding/ork", "Role/ork", "RoleBinding/ork", "Role/ork", "RoleBinding/ork",
				"ConfigMap/ork", "Deployment/ork",
				"Service/ork-metrics", "PodDisruptionBudget/ork", "FlowSchema/ork-leader-election"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := generate(t, tt.opts, remoteExample)
			if d := cmp.Diff(tt.want, kinds(b.Objects)); d != "" {
				t.Errorf("objects (-want +got):\n%s", d)
			}
			for _, o := range b.Objects {
				if o.GetKind() == "PodDisruptionBudget" {
					if v, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "maxUnavailable"); v != int64(1) {
						t.Errorf("maxUnavailable is %v, want 1", v)
					}
				}
			}
		})
	}
}

// The ServiceAccount, ClusterRole and binding are rbacgen's for --leader-elect: one code
// path, so `ork rbac gen --leader-elect` and the bundle can never disagree.
func TestRBACIsRbacGensLeaderElect(t *testing.T) {
	set := load(t, tlsKatalog)
	b, err := bundle.Generate(set, bundle.Options{Name: "db-operator", Namespace: "ops", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	rbac, err := rbacgen.Generate(set, rbacgen.Options{Name: "db-operator", Namespace: "ops", LeaderElect: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	for _, o := range rbac.Objects() {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	var got []map[string]any
	for _, o := range b.Objects {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			got = append(got, o.Object)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bundle RBAC differs from rbac gen --leader-elect (-want +got):\n%s", d)
	}
}

// deploymentOf returns the bundle's Deployment, typed.
func deploymentOf(t *testing.T, b *bundle.Bundle) *appsv1.Deployment {
	t.Helper()
	for _, o := range b.Objects {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			return &d
		}
	}
	t.Fatal("no Deployment")
	return nil
}

func TestDeploymentRunsOrkAsTheClusterNeeds(t *testing.T) {
	tests := []struct {
		name      string
		opts      bundle.Options
		files     []string
		wantArgs  []string
		wantGrace int64
	}{
		{
			name:      "defaults",
			files:     []string{remoteExample},
			wantArgs:  []string{"run", "-f", "/etc/ork/katalog.yaml", "--name=orkestra", "--leader-elect", "--shutdown-timeout=30s", "--log-level=info", "--log-format=text"},
			wantGrace: 45,
		},
		{
			name:      "two Katalogs, a longer shutdown",
			files:     []string{remoteExample, "../../examples/website/katalog.yaml"},
			opts:      bundle.Options{Name: "ops", ShutdownTimeout: 2*time.Minute + 500*time.Millisecond},
			wantArgs:  []string{"run", "-f", "/etc/ork/katalog-1.yaml", "-f", "/etc/ork/katalog-2.yaml", "--name=ops", "--leader-elect", "--shutdown-timeout=2m0.5s", "--log-level=info", "--log-format=text"},
			wantGrace: 136,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deploymentOf(t, generate(t, tt.opts, tt.files...))
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			if d := cmp.Diff(tt.wantArgs, c.Args); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
			if len(c.Command) != 0 {
				t.Errorf("command %q: the image's entrypoint is ork", c.Command)
			}
			if got := *pod.TerminationGracePeriodSeconds; got != tt.wantGrace {
				t.Errorf("terminationGracePeriodSeconds %d, want %d", got, tt.wantGrace)
			}
			env := map[string]string{}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
					env[e.Name] = e.ValueFrom.FieldRef.FieldPath
				}
			}
			if d := cmp.Diff(map[string]string{"POD_NAMESPACE": "metadata.namespace", "POD_NAME": "metadata.name", "POD_UID": "metadata.uid"}, env); len(c.Env) != 3 || d != "" {
				t.Errorf("env from the downward API (-want +got):\n%s\n%+v", d, c.Env)
			}
			for _, flag := range []string{"--kube-api-qps", "--kube-api-burst", "--namespace", "--install-crds"} {
				if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, flag) }) {
					t.Errorf("args set %s: ork's defaults and the downward API apply", flag)
				}
			}
		})
	}
}

// The pod meets the restricted Pod Security profile field by field (the integration test
// has the apiserver's admission check it too), with probes, ports, resources and spreading.
func TestPodSpec(t *testing.T) {
	d := deploymentOf(t, generate(t, bundle.Options{}, remoteExample))
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	sc, psc := c.SecurityContext, pod.SecurityContext
	checks := []struct {
		what string
		ok   bool
	}{
		{"runAsNonRoot", *psc.RunAsNonRoot && *sc.RunAsNonRoot && *psc.RunAsUser != 0},
		{"seccomp RuntimeDefault", psc.SeccompProfile.Type == "RuntimeDefault"},
		{"no privilege escalation", !*sc.AllowPrivilegeEscalation},
		{"read-only root filesystem", *sc.ReadOnlyRootFilesystem},
		{"all capabilities dropped", len(sc.Capabilities.Drop) == 1 && sc.Capabilities.Drop[0] == "ALL" && len(sc.Capabilities.Add) == 0},
		{"liveness /healthz on 8081", c.LivenessProbe.HTTPGet.Path == "/healthz" && c.LivenessProbe.HTTPGet.Port.StrVal == "health"},
		{"readiness /readyz on 8081", c.ReadinessProbe.HTTPGet.Path == "/readyz" && c.ReadinessProbe.HTTPGet.Port.StrVal == "health"},
		{"ports metrics 8080 and health 8081", len(c.Ports) == 2 && c.Ports[0].Name == "metrics" && c.Ports[0].ContainerPort == 8080 &&
			c.Ports[1].Name == "health" && c.Ports[1].ContainerPort == 8081},
		{"no CPU limit", c.Resources.Limits.Cpu().IsZero() && !c.Resources.Requests.Cpu().IsZero()},
		{"memory limit", c.Resources.Limits.Memory().String() == bundle.LimitMemory},
		{"spread across nodes", len(pod.TopologySpreadConstraints) == 1 && pod.TopologySpreadConstraints[0].TopologyKey == "kubernetes.io/hostname"},
		{"the bundle's ServiceAccount", pod.ServiceAccountName == "orkestra"},
		{"default image of the release", c.Image == "ghcr.io/orkspace/ork:1.2.3"},
		{"Katalog mounted read-only", len(c.VolumeMounts) == 1 && c.VolumeMounts[0].MountPath == bundle.MountPath && c.VolumeMounts[0].ReadOnly},
		{"two replicas", *d.Spec.Replicas == 2},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("pod spec: not %s:\n%+v", ch.what, pod)
		}
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		opts    bundle.Options
		wantHas string
	}{
		{"a release", tlsKatalog, bundle.Options{Version: "0.3.0"}, ""},
		{"an image of one's own", tlsKatalog, bundle.Options{Version: "dev", Image: "registry.example/ork:1"}, ""},
		{"an endpoint on loopback is the pod itself", remoteExample, bundle.Options{},
			"crds.webapp: endpoint http://127.0.0.1:8088/reconcile is a loopback address, which in the pod is the pod itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := generate(t, tt.opts, tt.file)
			all := strings.Join(b.Warnings, "\n")
			if tt.wantHas == "" && all != "" {
				t.Errorf("unexpected warnings: %s", all)
			}
			if !strings.Contains(all, tt.wantHas) {
				t.Errorf("warnings %q lack %q", all, tt.wantHas)
			}
		})
	}
}

func TestInvalidOptions(t *testing.T) {
	set := load(t, remoteExample)
	tests := []struct {
		name string
		opts bundle.Options
		want string
	}{
		{"a name over 40 characters", bundle.Options{Name: strings.Repeat("a", 41)}, "at most 40 characters, not 41"},
		{"a name that is no DNS-1035 label", bundle.Options{Name: "1ops"}, `name "1ops"`},
		{"a chart version that is no SemVer", bundle.Options{ChartVersion: "v1"}, `chart-version "v1"`},
		{"negative replicas", bundle.Options{Replicas: -1}, "replicas -1: want at least 1"},
		{"sub-second shutdown", bundle.Options{ShutdownTimeout: time.Millisecond}, "shutdown-timeout 1ms"},
		{"bad namespace", bundle.Options{Namespace: "Ops"}, `namespace "Ops"`},
		{"bad name", bundle.Options{Name: "a_b"}, `name "a_b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Version == "" {
				tt.opts.Version = "1.2.3"
			}
			_, err := bundle.Generate(set, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// configData is the ConfigMap's data.
func configData(t *testing.T, b *bundle.Bundle) map[string]string {
	t.Helper()
	for _, o := range b.Objects {
		if o.GetKind() == "ConfigMap" {
			data, _, err := unstructured.NestedStringMap(o.Object, "data")
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatal("no ConfigMap")
	return nil
}

// The in-pod Katalog loads and validates with ork's own loader, from a directory holding
// only the ConfigMap's files, as the pod's mount does, and declares the same CRDs.
func TestPodKatalogLoadsFromTheConfigMapAlone(t *testing.T) {
	b := generate(t, bundle.Options{}, tlsKatalog)
	dir := t.TempDir()
	data := configData(t, b)
	if d := cmp.Diff([]string{"ca-1.crt", "katalog.yaml"}, sortedKeys(data)); d != "" {
		t.Fatalf("ConfigMap keys (-want +got):\n%s", d)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ca, err := os.ReadFile("testdata/tls/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	if data["ca-1.crt"] != string(ca) {
		t.Error("ca-1.crt is not caFile's content")
	}
	inPod := load(t, filepath.Join(dir, "katalog.yaml"))
	orig := load(t, tlsKatalog)
	for _, name := range []string{"db", "webapp"} {
		got, want := inPod.CRD(name), orig.CRD(name)
		if got.CRDFile != "" || len(got.CRFiles) != 0 {
			t.Errorf("%s: the in-pod Katalog names files: crdFile %q, crFiles %q", name, got.CRDFile, got.CRFiles)
		}
		if d := cmp.Diff(*want.APITypes, *got.APITypes); d != "" {
			t.Errorf("%s: apiTypes (-want +got):\n%s", name, d)
		}
		if got.IsNamespaced() != want.IsNamespaced() {
			t.Errorf("%s: namespaced %v, want %v", name, got.IsNamespaced(), want.IsNamespaced())
		}
		if f := got.OperatorBox.Reconcile.Remote.TLS.CAFile; f != "ca-1.crt" {
			t.Errorf("%s: caFile %q, want ca-1.crt beside the Katalog", name, f)
		}
		if d := cmp.Diff(want.OperatorBox.Reconcile.Remote.Args, got.OperatorBox.Reconcile.Remote.Args); d != "" {
			t.Errorf("%s: args changed (-want +got):\n%s", name, d)
		}
	}
	if !strings.Contains(data["katalog.yaml"], "# the same CA as webapp's") {
		t.Errorf("the user's comments are lost:\n%s", data["katalog.yaml"])
	}
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// A changed Katalog changes the pod template, so `kubectl apply` rolls the pods.
func TestConfigHashFollowsTheKatalog(t *testing.T) {
	hash := func(b *bundle.Bundle) string {
		return deploymentOf(t, b).Spec.Template.Annotations[naming.ConfigHashAnnotation]
	}
	a, b := generate(t, bundle.Options{}, remoteExample), generate(t, bundle.Options{}, tlsKatalog)
	if hash(a) == "" || hash(a) == hash(b) {
		t.Errorf("config hashes %q and %q: want distinct and set", hash(a), hash(b))
	}
	if hash(a) != hash(generate(t, bundle.Options{}, remoteExample)) {
		t.Error("the same Katalog gives another hash")
	}
}

// The default image is used only for a release tag, with or without its v; anything else
// (a pseudo-version, a git describe, a dirty build, dev) has no published image, and
// Generate asks for --image, saying how to build one with ko.
func TestDefaultImageOnlyForAReleaseTag(t *testing.T) {
	set := load(t, tlsKatalog)
	tests := []struct {
		version, wantImage string
	}{
		{"1.2.3", "ghcr.io/orkspace/ork:1.2.3"},
		{"v1.2.3", "ghcr.io/orkspace/ork:1.2.3"},
		{"v1.3.0-rc.1", "ghcr.io/orkspace/ork:1.3.0-rc.1"},
		{"1.3.0-beta", "ghcr.io/orkspace/ork:1.3.0-beta"},
		{"dev", ""},
		{"", ""},
		{"(devel)", ""},
		{"v0.0.0-20240101120000-abcdef123456", ""},
		{"v1.2.4-0.20240101120000-abcdef123456", ""},
		{"v1.2.4-rc.1.0.20240101120000-abcdef123456", ""},
		{"v0.3.0-4-gabcdef0", ""},
		{"v1.2.3-dirty", ""},
		{"v1.2.3+dirty", ""},
		{"1.2", ""},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := bundle.Released(tt.version); got != (tt.wantImage != "") {
				t.Errorf("Released(%q) = %v", tt.version, got)
			}
			b, err := bundle.Generate(set, bundle.Options{Version: tt.version})
			if tt.wantImage == "" {
				var noImage *bundle.NoImageError
				if !errors.As(err, &noImage) {
					t.Fatalf("Generate: %v, want a NoImageError", err)
				}
				for _, want := range []string{"pass --image", "ko build ./cmd/ork", "KO_DOCKER_REPO="} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%q lacks %q", err, want)
					}
				}
				// An image of one's own is always taken.
				if _, err := bundle.Generate(set, bundle.Options{Version: tt.version, Image: "registry.example/ork:1"}); err != nil {
					t.Errorf("with --image: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := deploymentOf(t, b).Spec.Template.Spec.Containers[0].Image; got != tt.wantImage {
				t.Errorf("image %s, want %s", got, tt.wantImage)
			}
		})
	}
}

// The default name is the Katalog's metadata.name when every file gives the same valid one.
func TestDefaultName(t *testing.T) {
	dir := t.TempDir()
	write := func(file, name string) string {
		p := filepath.Join(dir, file)
		k := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: " + name + "}\nspec:\n  crds:\n    " + file[:1] +
			":\n      apiTypes: {group: " + file[:1] + ".example.com, version: v1, kind: A" + file[:1] + ", plural: a" + file[:1] + "s}\n"
		if err := os.WriteFile(p, []byte(k), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, a2, b := write("a.yaml", "team-a"), write("c.yaml", "team-a"), write("b.yaml", "team-b")
	long := write("l.yaml", strings.Repeat("x", 41))
	upper := write("u.yaml", "Team.A")
	tests := []struct {
		name    string
		files   []string
		want    string
		wantErr string
	}{
		{"one file", []string{a}, "team-a", ""},
		{"two files, one name", []string{a, a2}, "team-a", ""},
		{"two names", []string{a, b}, "", "different metadata.name (team-a, team-b)"},
		{"too long", []string{long}, "", "at most 40 characters"},
		{"no DNS-1035 label", []string{upper}, "", `metadata.name "Team.A" is not a DNS-1035 label`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, _, err := katalog.Load(tt.files)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bundle.DefaultName(set)
			if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("DefaultName = %q, %v; want %q, error with %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// Every object is named after the operator, so that two operators' bundles share nothing:
// with another name, Renamed lists each object (and the Lease) against its old name.
func TestEveryObjectNamedAfterTheOperator(t *testing.T) {
	b := generate(t, bundle.Options{Name: "team-a"}, remoteExample)
	for _, o := range b.Objects {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition":
			continue
		}
		if !strings.HasPrefix(o.GetName(), "team-a") {
			t.Errorf("%s %s is not named after the operator", o.GetKind(), o.GetName())
		}
	}
	d := deploymentOf(t, b)
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--name=team-a") {
		t.Errorf("ork run is not given --name=team-a: %q", d.Spec.Template.Spec.Containers[0].Args)
	}
	renamed := strings.Join(b.Renamed(), "\n")
	for _, want := range []string{"Deployment orkestra-system/orkestra -> team-a", "ClusterRole orkestra -> team-a",
		"Service orkestra-system/orkestra-metrics -> team-a-metrics", "FlowSchema orkestra-leader-election -> team-a-leader-election",
		"Lease orkestra-system/orkestra -> team-a"} {
		if !strings.Contains(renamed, want) {
			t.Errorf("Renamed lacks %q:\n%s", want, renamed)
		}
	}
	if r := generate(t, bundle.Options{}, remoteExample).Renamed(); len(r) != 0 {
		t.Errorf("the old name renames nothing, got %q", r)
	}
}

// A chart an older ork wrote (marked ork.orkspace.io/generated-by) is still replaced; the new
// one is marked with the one prefix.
func TestWriteChartReplacesAChartOfTheOldPrefix(t *testing.T) {
	dir := t.TempDir()
	old := "apiVersion: v2\nname: orkestra\nversion: 0.1.0\nannotations:\n  ork.orkspace.io/generated-by: ork bundle --helm\n"
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := generate(t, bundle.Options{}, remoteExample).Chart()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.WriteChart(dir, files); err != nil {
		t.Fatalf("the old chart is not replaced: %v", err)
	}
	chart, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(chart), naming.GeneratedAnnotation+": ork bundle --helm\n") {
		t.Errorf("Chart.yaml lacks %s:\n%s", naming.GeneratedAnnotation, chart)
	}
	if naming.GeneratedAnnotation != "orkestra.orkspace.io/generated-by" {
		t.Errorf("GeneratedAnnotation %s is not under the one prefix", naming.GeneratedAnnotation)
	}
}
