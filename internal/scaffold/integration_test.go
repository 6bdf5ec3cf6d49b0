package scaffold

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
)

var env *testenv.Env

// bins builds ork once per test binary; TestMain removes it.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(testenv.Main(m, &env))) }

// dockerfileRuns is the RUN lines of a Dockerfile.
func dockerfileRuns(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "RUN "); ok {
			runs = append(runs, rest)
		}
	}
	return runs
}

// Every base of both Dockerfiles is pinned by digest, and each runs as user 65532.
func TestDockerfilesPinTheirBasesAndRunAsNonRoot(t *testing.T) {
	from := regexp.MustCompile(`(?m)^FROM (--platform=\S+ )?(\S+)`)
	for _, r := range []Remote{RemoteGo, RemotePython, RemoteTS} {
		t.Run(string(r), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(write(t, Options{Remote: r}), "reconciler", "Dockerfile"))
			if err != nil {
				t.Fatal(err)
			}
			froms := from.FindAllStringSubmatch(string(data), -1)
			if len(froms) < 2 {
				t.Errorf("want a multi-stage build, got %d FROM lines", len(froms))
			}
			for _, m := range froms {
				if !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(m[2]) {
					t.Errorf("base %s is not pinned by digest", m[2])
				}
			}
			last := string(data[strings.LastIndex(string(data), "\nFROM "):])
			if !strings.Contains(last, "\nUSER 65532:65532\n") {
				t.Errorf("the runtime stage does not run as USER 65532:65532:\n%s", last)
			}
		})
	}
}

// The go build line of the generated Dockerfile, run as the build stage runs it (in the
// reconciler's directory, which the stage copies to its WORKDIR), builds a static binary.
func TestDockerfileGoBuildLineBuilds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image's binary is for linux")
	}
	dir := filepath.Join(write(t, Options{Remote: RemoteGo}), "reconciler")
	var build string
	for _, r := range dockerfileRuns(t, filepath.Join(dir, "Dockerfile")) {
		if strings.Contains(r, "go build") {
			if build != "" {
				t.Fatalf("two go build lines: %q and %q", build, r)
			}
			build = r
		}
	}
	if build == "" {
		t.Fatal("no RUN line with go build in the Dockerfile")
	}
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = dir
	// The build arguments BuildKit gives for the host's platform; its own module, no
	// workspace, no flags of ork's build, and the Go at hand.
	cmd.Env = append(os.Environ(), "TARGETOS=linux", "TARGETARCH="+runtime.GOARCH,
		"GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	// The runtime stage copies /src/reconciler: the line must have written it.
	f, err := elf.Open(filepath.Join(dir, "reconciler"))
	if err != nil {
		t.Fatalf("%s wrote no reconciler binary: %v", build, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the reconciler is dynamically linked: the distroless static base has no libc")
		}
	}
}

// koBin is ko as `make ko-bin` builds it: $ORK_KO_CACHE, else ~/.cache/ork/ko/<the version
// pinned in hack/ko-tools/go.mod>. Missing, it fails the test naming the target;
// ORK_SKIP_INTEGRATION=1 skips it, as it does the control plane.
func koBin(t *testing.T) string {
	t.Helper()
	if os.Getenv(testenv.SkipEnv) == "1" {
		t.Skipf("%s=1: needs ko (make ko-bin)", testenv.SkipEnv)
	}
	dir := os.Getenv("ORK_KO_CACHE")
	if dir == "" {
		gomod, err := os.ReadFile("../../hack/ko-tools/go.mod")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*github\.com/google/ko (v\S+)`).FindSubmatch(gomod)
		if m == nil {
			t.Fatal("hack/ko-tools/go.mod pins no github.com/google/ko")
		}
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(home, ".cache", "ork", "ko", string(m[1]))
	}
	bin := filepath.Join(dir, "ko")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("ko not found in %s: run `make ko-bin` (builds it from hack/ko-tools), or set ORK_KO_CACHE", dir)
	}
	return bin
}

// The Go reconciler builds with ko onto a stand-in of its Dockerfile's runtime base, the way
// `make image-check` builds ork's image: an image per platform, a static binary as its
// entrypoint, run as the Dockerfile's non-root user.
func TestGoReconcilerImageBuildsWithKo(t *testing.T) {
	ko := koBin(t)
	dir := filepath.Join(write(t, Options{Remote: RemoteGo}), "reconciler")
	// ko names the OCI layout by its path, which must be lowercase: not t.TempDir.
	work, err := os.MkdirTemp("", "ork-scaffold-ko-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	cmd := exec.CommandContext(t.Context(), "go", "run", "./imagecheck", "-reconciler", dir, "-ko", ko, "-work", work)
	cmd.Dir = "../../hack/ko-tools"
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "image-check: ok: linux/amd64, linux/arm64, user 65532:65532, entrypoint /ko-app/webapp-reconciler") {
		t.Fatalf("imagecheck -reconciler: %v\n%s", err, out)
	}
}

// restricted labels a namespace for the restricted Pod Security Standard: enforced, and
// warned about, so that a Deployment whose pods would be refused fails too (the apiserver
// enforces on Pods only; on workloads it warns).
func restricted(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	n, err := cs.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	n.Labels["pod-security.kubernetes.io/warn"] = "restricted"
	if _, err := cs.CoreV1().Namespaces().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No kube-controller-manager here: create the ServiceAccount it would, which the
	// ServiceAccount admission requires of a Pod.
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// warnings collects the apiserver's warnings (Warning headers).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// deploy/reconciler.yaml and secret.yaml pass a server-side dry run into a namespace that
// enforces the restricted Pod Security Standard, with no warning; the pod the Deployment
// would make is admitted there, and the same pod allowed privilege escalation is refused
// (so the PodSecurity admission is on in this apiserver, and the check means something).
func TestManifestsPassRestrictedPodSecurity(t *testing.T) {
	e := env.Require(t)
	for _, r := range []Remote{RemoteGo, RemotePython, RemoteTS} {
		t.Run(string(r), func(t *testing.T) {
			ns := e.Namespace(t)
			restricted(t, e.Clientset, ns)
			dir := write(t, Options{Remote: r, Namespace: ns})

			var warned warnings
			rc := rest.CopyConfig(e.Config)
			rc.WarningHandler = &warned
			dyn, err := dynamic.NewForConfig(rc)
			if err != nil {
				t.Fatal(err)
			}
			var objs []map[string]any
			for _, f := range []string{"deploy/reconciler.yaml", "secret.yaml"} {
				us, err := manifest.Read(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				for _, u := range us {
					if u.GetNamespace() != ns {
						t.Errorf("%s %s is in namespace %q, want --namespace's %q", u.GetKind(), u.GetName(), u.GetNamespace(), ns)
					}
					gvr := map[string]schema.GroupVersionResource{
						"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
						"Service":    {Version: "v1", Resource: "services"},
						"Secret":     {Version: "v1", Resource: "secrets"},
					}[u.GetKind()]
					if gvr.Resource == "" {
						t.Fatalf("%s holds a %s, which this test does not know", f, u.GetKind())
					}
					if _, err := dyn.Resource(gvr).Namespace(ns).Apply(t.Context(), u.GetName(), u,
						metav1.ApplyOptions{FieldManager: "ork-scaffold-test", DryRun: []string{metav1.DryRunAll}}); err != nil {
						t.Errorf("server-side dry run of %s %s: %v", u.GetKind(), u.GetName(), err)
					}
					objs = append(objs, u.Object)
				}
			}
			if len(objs) != 3 {
				t.Errorf("want a Deployment, a Service and a Secret, got %d objects", len(objs))
			}
			if len(warned.list) > 0 {
				t.Errorf("the apiserver warned: %q", warned.list)
			}

			var dep appsv1.Deployment
			for _, o := range objs {
				if o["kind"] == "Deployment" {
					if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o, &dep); err != nil {
						t.Fatal(err)
					}
				}
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "reconciler-", Namespace: ns}, Spec: dep.Spec.Template.Spec}
			dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
			if _, err := e.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, dry); err != nil {
				t.Errorf("the Deployment's pod is refused: %v", err)
			}
			bad := pod.DeepCopy()
			escalate := true
			bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &escalate
			if _, err := e.Clientset.CoreV1().Pods(ns).Create(t.Context(), bad, dry); err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
				t.Errorf("a pod allowed privilege escalation: got %v, want refused by PodSecurity (is the admission plugin on?)", err)
			}
		})
	}
}
