package sdk

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

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/remotecheck"
	"github.com/orkspace/ork/internal/testkit"
)

// examples is examples/remote: the Katalog, CR and token Secret the SDK examples serve.
const examples = "../examples/remote"

// example is one SDK's example reconciler: command starts it listening on addr.
type example struct {
	name    string
	command func(t *testing.T, addr string) *exec.Cmd
}

// goExample builds sdk/go/examples/webapp in the SDK's own module.
func goExample(t *testing.T) example {
	bin := filepath.Join(t.TempDir(), "webapp")
	build := exec.Command("go", "build", "-o", bin, "./examples/webapp")
	build.Dir = "go"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the Go SDK's example: %v\n%s", err, out)
	}
	return example{"go", func(_ *testing.T, addr string) *exec.Cmd { return exec.Command(bin, "--addr", addr) }}
}

// pythonExample runs sdk/python/examples/webapp.py; the test is skipped without python3.
func pythonExample(t *testing.T) example {
	python, err := exec.LookPath("python3")
	if err != nil {
		return example{"python", func(t *testing.T, _ string) *exec.Cmd {
			t.Skip("python3 is not on PATH: the Python SDK's example cannot run")
			return nil
		}}
	}
	return example{"python", func(_ *testing.T, addr string) *exec.Cmd {
		return exec.Command(python, filepath.Join("python", "examples", "webapp.py"), "--addr", addr)
	}}
}

// tsExample compiles sdk/ts (with the TypeScript of its lock file, installed by `npm ci`)
// and runs examples/webapp; the test is skipped without node or that install.
func tsExample(t *testing.T) example {
	skip := func(why string) example {
		return example{"ts", func(t *testing.T, _ string) *exec.Cmd {
			t.Skip(why)
			return nil
		}}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return skip("node is not on PATH: the TypeScript SDK's example cannot run")
	}
	tsc := filepath.Join("ts", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		return skip("no sdk/ts/node_modules: run npm ci in sdk/ts (make sdk-test does)")
	}
	out := t.TempDir()
	// The compiled files are ES modules: node reads that from the nearest package.json.
	if err := os.WriteFile(filepath.Join(out, "package.json"), []byte(`{"type": "module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(node, filepath.Join("node_modules", ".bin", "tsc"), "-p", ".", "--outDir", out)
	build.Dir = "ts"
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("tsc the TypeScript SDK: %v\n%s", err, b)
	}
	return example{"ts", func(_ *testing.T, addr string) *exec.Cmd {
		return exec.Command(node, filepath.Join(out, "examples", "webapp.js"), "--addr", addr)
	}}
}

// Each SDK's example reconciler passes ork remote check with no violation (delete
// included), answers /healthz, and exits 0 within 10 s of SIGTERM.
func TestExamplesPassRemoteCheck(t *testing.T) {
	set, findings, err := katalog.Load([]string{filepath.Join(examples, "katalog.yaml")})
	if err != nil || katalog.HasErrors(findings) {
		t.Fatalf("example katalog: %v %v", err, findings)
	}
	crs, err := manifest.Read(filepath.Join(examples, "cr.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := manifest.Read(filepath.Join(examples, "secret.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := unstructured.NestedString(secrets[0].Object, "stringData", "token")
	if err != nil || token == "" {
		t.Fatalf("examples/remote/secret.yaml: no stringData.token (%v)", err)
	}
	for _, ex := range []example{goExample(t), pythonExample(t), tsExample(t)} {
		t.Run(ex.name, func(t *testing.T) {
			tokenFile := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
				t.Fatal(err)
			}
			addr := testkit.FreeAddr(t)
			cmd := ex.command(t, addr)
			cmd.Env = append(os.Environ(), "RECONCILER_TOKEN_FILE="+tokenFile, "PYTHONDONTWRITEBYTECODE=1")
			p := testkit.Start(t, cmd)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s example:\n%s", ex.name, p.Output.String())
				}
			})
			p.WaitListening(t, addr, 30*time.Second)

			rep, err := remotecheck.Run(t.Context(), set, remotecheck.Options{
				CRD: "webapp", CR: crs[0], Endpoint: "http://" + addr + "/reconcile", IncludeDelete: true,
				Secrets: manifest.NewSecrets("the test's Secrets", secrets...),
			})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Conformant || len(rep.Violations) != 0 || len(rep.Requests) == 0 {
				t.Fatalf("not conformant: %+v", rep.Violations)
			}
			for _, r := range rep.Requests {
				if r.Status != 200 || r.Reason != "ReconcileSucceeded" {
					t.Errorf("%s: HTTP %d %s", r.Name, r.Status, r.Reason)
				}
			}
			resp, err := http.Get("http://" + addr + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			health, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.TrimSpace(string(health)) != "ok" {
				t.Errorf("/healthz: %d %q", resp.StatusCode, health)
			}
			inTime, err := p.Terminate(10 * time.Second)
			if !inTime || err != nil {
				t.Errorf("after SIGTERM: exited within 10 s %v, exit error %v", inTime, err)
			}
		})
	}
}
