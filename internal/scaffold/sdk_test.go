package scaffold

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/gentypes"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/remotecheck"
	"github.com/orkspace/ork/internal/testkit"
)

var remotes = []Remote{RemoteGo, RemotePython, RemoteTS}

// goEnv is the environment of go in a scaffold's reconciler: its own module, no workspace,
// no flags of ork's build, and the Go at hand.
func goEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
}

// nodeTools are node and the TypeScript SDK's installed compiler, which a TypeScript
// scaffold borrows (its lock file pins the same) so that its tests need no registry; the
// test is skipped without them.
func nodeTools(t *testing.T, rec string) (node, tsc string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	modules, err := filepath.Abs("../../sdk/ts/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	tsc = filepath.Join(modules, "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Skip("no sdk/ts/node_modules: run npm ci in sdk/ts (make sdk-test does)")
	}
	if err := os.Symlink(modules, filepath.Join(rec, "node_modules")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	return node, tsc
}

// typeCheck is the strict check of the reconciler in rec: go vet, mypy --strict, tsc
// --noEmit (strict by its tsconfig.json). It skips when the tool is missing.
func typeCheck(t *testing.T, r Remote, rec string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	switch r {
	case RemoteGo:
		cmd = exec.Command("go", "vet", "./...")
		cmd.Env = goEnv()
	case RemotePython:
		if _, err := exec.LookPath("mypy"); err != nil {
			t.Skip("mypy is not on PATH")
		}
		cmd = exec.Command("mypy", "--strict", "--cache-dir", filepath.Join(t.TempDir(), "mypy"), ".")
	case RemoteTS:
		node, tsc := nodeTools(t, rec)
		cmd = exec.Command(node, tsc, "-p", ".", "--noEmit")
	}
	cmd.Dir = rec
	return cmd
}

// Each reconciler type-checks strictly as written: its code, the vendored SDK and the types
// generated from its CRD.
func TestReconcilersTypeCheck(t *testing.T) {
	for _, r := range remotes {
		t.Run(string(r), func(t *testing.T) {
			rec := filepath.Join(write(t, Options{Remote: r, Kind: "Database", Name: "db"}), "reconciler")
			if out, err := typeCheck(t, r, rec).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// A spec field renamed in crd.yaml, and the types regenerated as `ork gen types` does, fails
// the reconciler's type check, naming the field the reconciler still reads.
func TestRenamedFieldFailsTheReconcilersTypeCheck(t *testing.T) {
	wants := map[Remote]string{RemoteGo: "Image", RemotePython: `"image"`, RemoteTS: "'image'"}
	for _, r := range remotes {
		t.Run(string(r), func(t *testing.T) {
			dir := write(t, Options{Remote: r})
			rec := filepath.Join(dir, "reconciler")
			crd := filepath.Join(dir, "crd.yaml")
			data, err := os.ReadFile(crd)
			if err != nil {
				t.Fatal(err)
			}
			renamed := strings.Replace(strings.Replace(string(data), "required: [image]", "required: [containerImage]", 1),
				"                image:\n", "                containerImage:\n", 1)
			if renamed == string(data) || strings.Contains(renamed, " image:") {
				t.Fatal("crd.yaml no longer has the spec.image this test renames")
			}
			if err := os.WriteFile(crd, []byte(renamed), 0o644); err != nil {
				t.Fatal(err)
			}
			set, findings, err := katalog.Load([]string{filepath.Join(dir, "katalog.yaml")})
			if err != nil || katalog.HasErrors(findings) {
				t.Fatalf("load: %v %v", err, findings)
			}
			lang := langs[r]
			src, err := gentypes.Generate(set, gentypes.Options{Lang: lang})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rec, gentypes.FileName(lang)), src, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := typeCheck(t, r, rec).CombinedOutput()
			if err == nil {
				t.Fatalf("the reconciler still type-checks after the rename:\n%s", out)
			}
			if !strings.Contains(string(out), wants[r]) {
				t.Errorf("the failure does not name the field (%s):\n%s", wants[r], out)
			}
		})
	}
}

// startReconciler runs the reconciler in rec, built or compiled first, listening on addr,
// with env (its token) added to the environment.
func startReconciler(t *testing.T, r Remote, rec, addr string, env ...string) *testkit.Process {
	t.Helper()
	var cmd *exec.Cmd
	switch r {
	case RemoteGo:
		bin := filepath.Join(t.TempDir(), "reconciler")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir, build.Env = rec, goEnv()
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		cmd = exec.Command(bin, "-addr", addr)
	case RemotePython:
		python, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not on PATH")
		}
		cmd = exec.Command(python, "reconciler.py", "--addr", addr)
	case RemoteTS:
		node, tsc := nodeTools(t, rec)
		build := exec.Command(node, tsc, "-p", ".")
		build.Dir = rec
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("tsc: %v\n%s", err, out)
		}
		cmd = exec.Command(node, filepath.Join("build", "reconciler.js"), "--addr", addr)
	}
	cmd.Dir = rec
	cmd.Env = append(append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1"), env...)
	p := testkit.Start(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reconciler:\n%s", p.Output.String())
		}
	})
	p.WaitListening(t, addr, 30*time.Second)
	return p
}

// Each reconciler passes ork remote check against its own Katalog, sample and Secret with
// no violation (delete included), answers /healthz and /readyz, and exits 0 within 10 s of
// SIGTERM.
func TestReconcilersPassRemoteCheck(t *testing.T) {
	for _, r := range remotes {
		t.Run(string(r), func(t *testing.T) {
			dir := write(t, Options{Remote: r, Kind: "Database", Group: "data.myorg.io", Name: "db"})
			set, findings, err := katalog.Load([]string{filepath.Join(dir, "katalog.yaml")})
			if err != nil || katalog.HasErrors(findings) {
				t.Fatalf("load: %v %v", err, findings)
			}
			crs, err := manifest.Read(filepath.Join(dir, "cr.yaml"))
			if err != nil || len(crs) != 1 {
				t.Fatalf("cr.yaml: %v", err)
			}
			secrets, err := manifest.Read(filepath.Join(dir, "secret.yaml"))
			if err != nil || len(secrets) != 1 {
				t.Fatalf("secret.yaml: %v", err)
			}
			token, _, _ := unstructured.NestedString(secrets[0].Object, "stringData", "token")
			tokenFile := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
				t.Fatal(err)
			}
			addr := testkit.FreeAddr(t)
			p := startReconciler(t, r, filepath.Join(dir, "reconciler"), addr, "RECONCILER_TOKEN_FILE="+tokenFile)

			rep, err := remotecheck.Run(t.Context(), set, remotecheck.Options{
				CRD: "db", CR: crs[0], Endpoint: "http://" + addr + "/reconcile", IncludeDelete: true,
				Secrets: manifest.NewSecrets("secret.yaml", secrets...),
			})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Conformant || len(rep.Violations) != 0 || len(rep.Requests) == 0 {
				t.Fatalf("not conformant: %+v", rep.Violations)
			}
			for _, req := range rep.Requests {
				if req.Status != http.StatusOK || req.Reason != "ReconcileSucceeded" {
					t.Errorf("%s: HTTP %d %s", req.Name, req.Status, req.Reason)
				}
			}
			for _, probe := range []string{"/healthz", "/readyz"} {
				resp, err := http.Get("http://" + addr + probe)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
					t.Errorf("%s: %d %q", probe, resp.StatusCode, body)
				}
			}
			if inTime, err := p.Terminate(10 * time.Second); !inTime || err != nil {
				t.Errorf("after SIGTERM: exited within 10 s %v, exit error %v", inTime, err)
			}
		})
	}
}
