package scaffold

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/katalogschema"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/validate"
	"github.com/orkspace/ork/schema"
)

// write renders o's files into a new temporary directory and returns it.
func write(t *testing.T, o Options) string {
	t.Helper()
	o = o.Complete()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	files, err := Files(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Write(dir, files, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every flavour is a Katalog that ork validate passes without a finding, warnings included,
// and that the Katalog schema accepts.
func TestEveryFlavourValidates(t *testing.T) {
	v, err := katalogschema.NewValidator(schema.Katalog())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{},
		{Remote: RemoteGo},
		{Remote: RemotePython, Kind: "Database", Group: "data.myorg.io", Name: "db", Namespace: "team-a"},
		{Remote: RemoteTS, Kind: "Proxy", Name: "edge"},
	} {
		t.Run(string(o.Complete().Remote), func(t *testing.T) {
			dir := write(t, o)
			k := filepath.Join(dir, "katalog.yaml")
			set, fs, err := katalog.Load([]string{k})
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, validate.Katalog(set)...)
			for _, f := range fs {
				t.Errorf("%s:%d:%d: %s: %s: %s", f.File, f.Line, f.Column, f.Severity, f.Path, f.Message)
			}
			data, err := os.ReadFile(k)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Check(data); err != nil {
				t.Errorf("the Katalog schema rejects katalog.yaml: %v", err)
			}
			if !strings.HasPrefix(string(data), "# yaml-language-server: $schema="+katalogschema.ID+"\n") {
				t.Errorf("katalog.yaml does not start with the editor's schema line:\n%s", data)
			}
		})
	}
}

// The Go reconciler is a module of its own whose test passes: go test in a copy, as a user
// would run it.
func TestGoReconcilerTestPasses(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	dir := write(t, Options{Remote: RemoteGo, Name: "web-app"})
	cmd := exec.Command(goBin, "test", "-count=1", "./...")
	cmd.Dir = filepath.Join(dir, "reconciler")
	// Its own module: no workspace, no flags of ork's build, and the Go at hand.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in the generated reconciler: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ok ") {
		t.Errorf("go test ran no test:\n%s", out)
	}
}

// The Python reconciler's unittest passes, where python3 is installed.
func TestPythonReconcilerTestPasses(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	dir := write(t, Options{Remote: RemotePython, Name: "web-app"})
	cmd := exec.Command(python, "-m", "unittest", "-v")
	cmd.Dir = filepath.Join(dir, "reconciler")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest in the generated reconciler: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Ran 11 tests") || !strings.Contains(string(out), "\nOK") {
		t.Errorf("want 11 tests, all passing:\n%s", out)
	}
}

func TestWriteRefusesToOverwriteUnlessForced(t *testing.T) {
	files, err := Files(Options{Remote: RemoteGo}.Complete())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Write(dir, files, false); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "cr.yaml")
	if err := os.WriteFile(mine, []byte("my edits\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "katalog.yaml")); err != nil {
		t.Fatal(err)
	}

	_, err = Write(dir, files, false)
	var exists *ExistsError
	if !errors.As(err, &exists) || len(exists.Paths) != len(files)-1 || !slices.Contains(exists.Paths, mine) {
		t.Fatalf("want every existing file refused, got %v", err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "my edits\n" {
		t.Errorf("a refused write changed %s", mine)
	}
	if _, err := os.Stat(filepath.Join(dir, "katalog.yaml")); err == nil {
		t.Error("a refused write wrote the missing katalog.yaml: it must write nothing")
	}

	written, err := Write(dir, files, true)
	if err != nil || len(written) != len(files) {
		t.Fatalf("--force: wrote %v, %v", written, err)
	}
	if b, _ := os.ReadFile(mine); string(b) == "my edits\n" {
		t.Error("--force kept the old cr.yaml")
	}
	if st, _ := os.Stat(mine); st.Mode().Perm() != 0o644 {
		t.Errorf("--force left cr.yaml's mode %v, want 0644", st.Mode().Perm())
	}
}

// A README.md of the user's own is extended: ork init's section is appended below it, and
// --force replaces that section alone.
func TestWriteExtendsAnExistingREADME(t *testing.T) {
	files, err := Files(Options{Remote: RemoteGo}.Complete())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	const mine = "# My project\n\nmy notes\n"
	if err := os.WriteFile(readme, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, files, false); err != nil {
		t.Fatalf("a README of the user's own must not stop ork init: %v", err)
	}
	got, _ := os.ReadFile(readme)
	if !strings.HasPrefix(string(got), mine+"\n"+SectionStart+"\n") || !strings.HasSuffix(string(got), SectionEnd+"\n") {
		t.Fatalf("want the user's text, a blank line, then ork init's section:\n%s", got)
	}

	// Again: the section exists, so the README is refused like every other file.
	var exists *ExistsError
	if _, err := Write(dir, files, false); !errors.As(err, &exists) || !slices.Contains(exists.Paths, readme) {
		t.Fatalf("want the README with ork init's section refused without --force, got %v", err)
	}
	// --force with other options: the section is replaced, the user's text kept, nothing doubled.
	edited := strings.Replace(string(got), SectionEnd, "\nmore notes, after the section\n"+SectionEnd, 1) + "trailing notes\n"
	if err := os.WriteFile(readme, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err = Files(Options{Remote: RemotePython, Namespace: "team-a"}.Complete())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, files, true); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(readme)
	for _, want := range []string{mine, "python3 reconciler.py", "--namespace team-a", "trailing notes\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(string(got), SectionStart) != 1 || strings.Contains(string(got), "more notes") || strings.Contains(string(got), "go run .") {
		t.Errorf("--force must replace ork init's section, and only it:\n%s", got)
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string // "" when valid
	}{
		{Options{}, ""},
		{Options{Kind: "Proxy", Group: "net.example.org", Name: "proxy-1", Remote: RemotePython}, ""},
		{Options{Kind: "webApp"}, `kind "webApp": want CamelCase`},
		{Options{Kind: "Web-App"}, `kind "Web-App": want CamelCase`},
		{Options{Group: "example"}, `group "example": want a lowercase DNS name with a dot`},
		{Options{Group: "Example.com"}, `group "Example.com"`},
		{Options{Name: "Web_App"}, `name "Web_App": want lowercase letters`},
		{Options{Remote: "ruby"}, `remote "ruby": want go, python, ts or none`},
		{Options{Remote: RemoteTS}, ""},
		{Options{Namespace: "Team_A"}, `namespace "Team_A": want lowercase letters`},
		{Options{Name: "1db", Remote: RemoteGo}, `the reconciler's Service would be "1db-operator-reconciler", which is no DNS-1035 label`},
		{Options{Name: "1db"}, ""}, // no Service without a remote reconciler
		{Options{Name: strings.Repeat("a", 44), Remote: RemotePython}, "which is no DNS-1035 label"},
		{Options{Name: strings.Repeat("a", 43), Remote: RemotePython}, ""},
	} {
		err := tc.o.Complete().Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
	for kind, want := range map[string]string{
		"WebApp": "webapps", "Proxy": "proxies", "Gateway": "gateways", "Bus": "buses",
		"Box": "boxes", "Batch": "batches", "Mesh": "meshes",
	} {
		if got := plural(kind); got != want {
			t.Errorf("plural(%s) = %s, want %s", kind, got, want)
		}
	}
}

// The pieces that must agree do: the Katalog's endpoint is the Service of
// deploy/reconciler.yaml (name, namespace, port, path), the Service reaches the container's
// port, the reconciler listens there on every interface, and it reads the token from the
// file of the Secret the Katalog names.
func TestKatalogAndManifestsAgree(t *testing.T) {
	for _, o := range []Options{{Remote: RemoteGo}, {Remote: RemotePython, Name: "db", Kind: "Database", Namespace: "team-a"}, {Remote: RemoteTS}} {
		t.Run(string(o.Remote), func(t *testing.T) {
			dir := write(t, o)
			o = o.Complete()
			set, _, err := katalog.Load([]string{filepath.Join(dir, "katalog.yaml")})
			if err != nil {
				t.Fatal(err)
			}
			rem := set.CRD(o.Name).OperatorBox.Reconcile.Remote
			objs, err := manifest.Read(filepath.Join(dir, "deploy", "reconciler.yaml"))
			if err != nil || len(objs) != 2 {
				t.Fatalf("deploy/reconciler.yaml: %d objects, %v", len(objs), err)
			}
			var dep appsv1.Deployment
			var svc corev1.Service
			for _, u := range objs {
				var into any = &svc
				if u.GetKind() == "Deployment" {
					into = &dep
				}
				if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
					t.Fatal(err)
				}
			}
			want := fmt.Sprintf("http://%s.%s.svc:%d/reconcile", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)
			if rem.Endpoint != want || svc.Name != o.Name+"-operator-reconciler" || svc.Namespace != o.Namespace || svc.Spec.Ports[0].Port != Port {
				t.Errorf("endpoint %s, Service %s/%s port %d: want the endpoint %s on port %d", rem.Endpoint, svc.Namespace, svc.Name, svc.Spec.Ports[0].Port, want, Port)
			}
			if ref := rem.Auth.SecretRef; ref.Namespace != o.Namespace || ref.Name != o.Name+"-reconciler-token" {
				t.Errorf("secretRef %s/%s, want the Secret in %s", ref.Namespace, ref.Name, o.Namespace)
			}
			for k, v := range svc.Spec.Selector {
				if dep.Spec.Template.Labels[k] != v {
					t.Errorf("the Service selects %s=%s, which the pods lack", k, v)
				}
			}
			c := dep.Spec.Template.Spec.Containers[0]
			if len(c.Ports) != 1 || c.Ports[0].Name != svc.Spec.Ports[0].TargetPort.StrVal || c.Ports[0].ContainerPort != Port {
				t.Errorf("container ports %v, Service targetPort %v", c.Ports, svc.Spec.Ports[0].TargetPort)
			}
			envs := map[string]string{}
			for _, e := range c.Env {
				envs[e.Name] = e.Value
			}
			if envs["RECONCILER_ADDR"] != fmt.Sprintf(":%d", Port) {
				t.Errorf("RECONCILER_ADDR %q, want :%d (every interface)", envs["RECONCILER_ADDR"], Port)
			}
			vol := dep.Spec.Template.Spec.Volumes[0]
			mount := c.VolumeMounts[0]
			if vol.Secret == nil || vol.Secret.SecretName != rem.Auth.SecretRef.Name || mount.Name != vol.Name || mount.SubPath != "" ||
				len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != rem.Auth.SecretRef.Key ||
				envs["RECONCILER_TOKEN_FILE"] != mount.MountPath+"/"+vol.Secret.Items[0].Path {
				t.Errorf("the token file %q is not the mounted key %q of Secret %s (volume %+v, mount %+v)",
					envs["RECONCILER_TOKEN_FILE"], rem.Auth.SecretRef.Key, rem.Auth.SecretRef.Name, vol, mount)
			}
			if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("probes %s and %s, want /readyz and /healthz", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
			}
		})
	}
}
