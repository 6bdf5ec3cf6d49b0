package run_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/testkit"
)

// kubeconfig writes a copy of the admin kubeconfig, edited by edit, and returns its path.
func (f *fixture) kubeconfig(edit func(*clientcmdapi.Config)) string {
	f.T.Helper()
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		f.T.Fatal(err)
	}
	edit(cfg)
	path := filepath.Join(f.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		f.T.Fatal(err)
	}
	return path
}

// impersonating edits a kubeconfig to act as a ServiceAccount with no bindings.
func impersonating(ns, sa string) func(*clientcmdapi.Config) {
	return func(cfg *clientcmdapi.Config) {
		for _, ai := range cfg.AuthInfos {
			ai.Impersonate = "system:serviceaccount:" + ns + ":" + sa
			ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
		}
	}
}

// orkRun runs the ork binary to completion with a bound, returning stderr and the exit code.
func orkRun(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"run", "--health-addr=", "--metrics-addr="}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return stderr.String(), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return stderr.String(), 0
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("ork run still running after 2 minutes:\n%s", stderr.String())
		return "", 0
	}
}

// Missing permissions: exit 1 with the list; --preflight=false skips that check, and the
// informers that cannot list then fail the start after --cache-sync-timeout.
func TestRunUnderAnIdentityWithoutPermissions(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: "http://127.0.0.1:1/"})
	kc := f.kubeconfig(impersonating(f.NS, "nobody"))
	stderr, code := orkRun(t, bin, nil, "-f", f.Katalog, "--kubeconfig", kc, "--namespace", f.NS)
	if code != 1 || !strings.Contains(stderr, "preflight: the current identity lacks") || !strings.Contains(stderr, "verb=list group=apps resource=deployments") {
		t.Errorf("exit %d, want 1 with the missing permissions listed:\n%s", code, stderr)
	}
	stderr, code = orkRun(t, bin, nil, "-f", f.Katalog, "--kubeconfig", kc, "--namespace", f.NS,
		"--preflight=false", "--cache-sync-timeout=3s")
	if code != 1 || strings.Contains(stderr, "preflight") || !strings.Contains(stderr, "caches did not sync within 3s") {
		t.Errorf("exit %d, want 1 naming the caches that did not sync, and no preflight:\n%s", code, stderr)
	}
}

// --context picks the kubeconfig context; POD_NAMESPACE is ork's namespace when --namespace
// is not given (a secretRef without a namespace is read there).
func TestRunContextAndPodNamespace(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), SecretNamespace: "-"})
	kc := f.kubeconfig(func(cfg *clientcmdapi.Config) {
		good := cfg.Contexts[cfg.CurrentContext]
		cfg.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
		cfg.Contexts["good"] = good
		cfg.Contexts["broken"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: good.AuthInfo}
		cfg.CurrentContext = "broken"
	})
	cmd := exec.Command(bin, "run", "-f", f.Katalog, "--kubeconfig", kc, "--context", "good", "--health-addr=", "--metrics-addr=")
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+f.NS)
	cmd.Stderr = f.Logs
	testkit.Start(t, cmd)
	f.CreateCR("web", map[string]any{})
	c := ep.Next(t)
	if got := c.Header.Get("Authorization"); got != "Bearer "+runtest.TestToken {
		t.Errorf("Authorization = %q: the token was not read from POD_NAMESPACE's Secret", got)
	}
	f.WaitReady("web", "True")
}

// --backoff-base sets the first retry delay of a failed reconcile, doubling after, and
// --backoff-max caps it: a fault that lasts past the cap shows retries spaced at the cap,
// not beyond.
func TestRunBackoffFlags(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response { return runtest.JSONResponse(map[string]any{"result": "error", "error": "no"}) })
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	p := startOrk(t, f, bin, "--backoff-base=300ms", "--backoff-max=1s")
	p.waitLine(t, f, "ork is running")
	f.CreateCR("web", map[string]any{})
	var calls []call
	for range 6 {
		calls = append(calls, ep.Next(t))
	}
	// 300 ms, 600 ms, then the cap three times (uncapped: 1.2 s, 2.4 s, 4.8 s), each from the
	// end of the failed pass before (its log line; the pass's status write after its call
	// can take a second on a loaded machine). A retry cannot come sooner; it may come later
	// by the queue's wake-up, the call's way and, once the token Secret's 5 s reuse ran out,
	// its read from the apiserver: 1 s of slack on a loaded 2-core machine. Uncapped, the last
	// two retries would come 0.4 s and 2.8 s past cap + slack. The first retry, before the
	// token's read is due, proves the base: at the default base (1 s) it could not come
	// before 1 s, which leaves it 700 ms of slack.
	var passes []loggedPass
	f.Eventually("the failed passes before the last call logged", func() (bool, error) {
		passes = f.loggedPasses("web")
		return len(passes) >= len(calls)-1, nil
	})
	for i, p := range passes[:len(calls)-1] {
		if sent, _, _ := unstructured.NestedFloat64(calls[i].Body, "prepared", "attempt"); p.attempt != int64(i+1) || int64(sent) != p.attempt {
			t.Fatalf("pass %d logged attempt %d, its call sent %v, want %d: the passes and the calls do not pair up", i+1, p.attempt, sent, i+1)
		}
	}
	const capDelay, slack, defaultBase = time.Second, time.Second, time.Second
	for i, floor := range []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, capDelay, capDelay, capDelay} {
		gap := calls[i+1].Start.Sub(passes[i].ended)
		t.Logf("retry %d came %v after the pass before ended", i+1, gap)
		if gap < floor {
			t.Errorf("retry %d came %v after the pass before ended, want at least %v", i+1, gap, floor)
		}
		if i == 0 && gap >= defaultBase {
			t.Errorf("retry 1 came %v after the pass before ended, want under the default base %v: --backoff-base did not reach the queue", gap, defaultBase)
		}
		if floor == capDelay && gap > capDelay+slack {
			t.Errorf("retry %d came %v after the pass before ended, want at most the cap %v (+%v): the backoff went beyond --backoff-max", i+1, gap, capDelay, slack)
		}
	}
}

// Past --shutdown-timeout, a reconcile that does not finish is cancelled and ork still
// exits 0.
func TestShutdownTimeoutCancelsInFlightCalls(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	ep := runtest.NewEndpoint(t, func(c call) response {
		started <- struct{}{}
		<-c.Ctx.Done() // never answers: only ork's cancellation ends it
		cancelled <- struct{}{}
		return runtest.OKWithChildren(c)
	})
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Timeout: "5m"})
	p := startOrk(t, f, bin, "--shutdown-timeout=1s")
	p.waitLine(t, f, "ork is running")
	f.CreateCR("web", map[string]any{})
	<-started
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
		err := p.Err()
		if err != nil {
			t.Errorf("ork exited with %v after the shutdown timeout, want 0:\n%s", err, f.Logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("ork still runs a minute after SIGTERM with --shutdown-timeout=1s")
	}
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Error("the in-flight call was never cancelled")
	}
	if !strings.Contains(f.Logs.String(), "shutdown timeout: cancelling in-flight reconciles") {
		t.Errorf("no shutdown-timeout log line:\n%s", f.Logs.String())
	}
}

// --kube-api-qps/--kube-api-burst put a client-side limit back (off by default: the
// apiserver's API Priority and Fairness paces ork); a negative value is a usage error.
// The binary's requests are counted at a proxy in front of the apiserver: by any time t
// after its start, at most burst + qps × t of them arrived. Without the flag the start's
// access review alone sends 29 requests at once, and the CRs waiting for ork several more
// each.
func TestRunWithAClientSideRateLimit(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	if stderr, code := orkRun(t, bin, nil, "-f", f.Katalog, "--kubeconfig", env.Kubeconfig, "--kube-api-qps=-1"); code != 2 ||
		!strings.Contains(stderr, "must not be negative") {
		t.Errorf("--kube-api-qps=-1: exit %d, want 2 with a usage error:\n%s", code, stderr)
	}
	// A burst other than ork's default of 2 × qps: ignoring --kube-api-burst shows too.
	const qps, burst, crs = 10, 10, 10
	for i := range crs { // before ork starts: its first passes all come at once
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
	}
	clock := &requestClock{}
	kc := f.kubeconfig(throughProxy(countingAPIProxy(t, clock)))
	// Taken before ork exists, so before its limiter does: no slack is needed for the
	// time ork takes to start, a slow start only loosens the bound.
	start := time.Now()
	p := startOrk(t, f, bin, "--kubeconfig", kc, // the later --kubeconfig wins
		fmt.Sprintf("--kube-api-qps=%d", qps), fmt.Sprintf("--kube-api-burst=%d", burst))
	p.waitLine(t, f, "ork is running")
	for i := range crs {
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	// Slack: none beyond the rounding down to whole requests in overSince.
	if over, when := clock.overSince(start, qps, burst); over > 0 {
		t.Errorf("with --kube-api-qps=%d --kube-api-burst=%d: %s, %d beyond the limit", qps, burst, when, over)
	}
	// The first burst goes without waiting: with fewer than a few bursts' worth the
	// limiter would have held back too little for the bound to mean anything.
	if n := clock.count(); n < 4*burst {
		t.Errorf("ork sent %d requests through the proxy, want at least %d for the limit to bind", n, 4*burst)
	}
}
