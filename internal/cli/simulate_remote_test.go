package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/reconcilertest"
)

// The Go example reconciler, built and started on loopback, is simulated to steady state;
// the recording of that run, replayed without it, gives the same plan and objects.
func TestSimulateRemoteAgainstTheGoExample(t *testing.T) {
	bin := reconcilertest.BuildGo(t, &bins)
	endpoint := reconcilertest.StartGo(t, bin, reconcilertest.Token(t))
	rec := filepath.Join(t.TempDir(), "rec")
	live := []string{"simulate", "-f", exampleKatalog, "--remote", "--secrets", exampleSecret, "--endpoint", endpoint}

	code, plan, errOut := runOrk(t, append(live, "--record", rec)...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden.Assert(t, filepath.Join("testdata", "simulate", "remote-go.golden"), []byte(plan))
	code, objects, errOut := runOrk(t, append(live, "-o", "yaml")...)
	if code != 0 || errOut != "" {
		t.Fatalf("-o yaml: exit %d, stderr %q", code, errOut)
	}
	golden.Assert(t, filepath.Join("testdata", "simulate", "remote-go.golden.yaml"), []byte(objects))

	files, _ := filepath.Glob(filepath.Join(rec, "*.json"))
	if len(files) != 3 { // create, then two quiet resyncs
		t.Fatalf("recorded %d exchanges, want 3: %v", len(files), files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), reconcilertest.Token(t)) || strings.Contains(string(data), "Authorization") {
		t.Errorf("the recording holds the token or the auth header:\n%s", data)
	}

	replay := []string{"simulate", "-f", exampleKatalog, "--remote", "--replay", rec}
	code, replayed, errOut := runOrk(t, replay...)
	if code != 0 || errOut != "" || replayed != plan {
		t.Errorf("replay: exit %d, stderr %q\n%s\nwant the live plan:\n%s", code, errOut, replayed, plan)
	}
	code, replayedObjects, _ := runOrk(t, append(replay, "-o", "yaml")...)
	if code != 0 || replayedObjects != objects {
		t.Errorf("replay -o yaml: exit %d, objects differ from the live run's:\n%s", code, replayedObjects)
	}

	// Another spec is another question: the replay says which request it cannot answer.
	cr := filepath.Join(t.TempDir(), "cr.yaml")
	data, err = os.ReadFile("../../examples/remote/cr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cr, []byte(strings.Replace(string(data), "replicas: 2", "replicas: 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runOrk(t, append(replay, "--cr", cr)...)
	want := "error: simulate webapp webapps/my-webapp: no recorded exchange in " + rec + " for default/my-webapp (trigger create, request sha256:"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q\nwant exit 1 and %q", code, errOut, want)
	}
}

func TestSimulateRemoteFlagsNeedRemote(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint", "http://x"}, "--endpoint needs --remote"},
		{[]string{"--replay", "dir"}, "--replay needs --remote"},
		{[]string{"--remote", "--record", "a", "--replay", "b"}, "--record and --replay: pick one"},
		{[]string{"--remote", "--replay", "b", "--endpoint", "http://x"}, "--endpoint and --replay: pick one"},
		{[]string{"--remote", "--redact", "spec.x"}, "--redact needs --record"},
		{[]string{"--remote", "--replay", "does-not-exist"}, "--replay: replay: stat does-not-exist: no such file or directory"},
	}
	for _, tt := range tests {
		code, out, errOut := runOrk(t, append([]string{"simulate", "-f", exampleKatalog}, tt.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// A "pending" answer is followed cycle by cycle: the summary marks the cycles that left it
// pending and says how the operation ended.
func TestSimulateRemoteFollowsPending(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		calls++ // the run calls one at a time
		w.Header().Set("Content-Type", "application/json")
		if calls == 1 {
			_, _ = io.WriteString(w, `{"result":"pending","operation":{"id":"db-1","pollAfter":"1s","progress":40,"message":"creating"}}`)
			return
		}
		_, _ = io.WriteString(w, goodAnswer)
	}))
	t.Cleanup(srv.Close)
	code, out, errOut := runOrk(t, "simulate", "-f", exampleKatalog, "--remote", "--secrets", exampleSecret, "--endpoint", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, w := range []string{
		`cycle 1 (operation "db-1" pending):`,
		`operation "db-1" (cycle 1): 1 poll, waited 1s, done`,
		"steady state at cycle 4",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	code, _, errOut = runOrk(t, "simulate", "-f", exampleKatalog, "--remote", "--operation-wait", "0s")
	if code != 2 || !strings.Contains(errOut, "--operation-wait 0s: want a positive duration") {
		t.Errorf("--operation-wait 0s: exit %d, %s", code, errOut)
	}
}
