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
	for _, ex := range []example{goExample(t), pythonExample(t)} {
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
