package target

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const token = "s3cr3t-t0ken-never-logged"

// spoke is an httptest TLS server standing in for a spoke's apiserver: it answers /readyz
// and /version, and records the bearer tokens it was called with.
type spoke struct {
	srv    *httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newSpoke(t *testing.T) *spoke {
	t.Helper()
	s := &spoke{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.tokens = append(s.tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		s.mu.Unlock()
		switch r.URL.Path {
		case "/readyz":
			fmt.Fprint(w, "ok")
		case "/version":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"35","gitVersion":"v1.35.0"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// lastToken is the token of the last request.
func (s *spoke) lastToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tokens) == 0 {
		return ""
	}
	return s.tokens[len(s.tokens)-1]
}

// kubeconfig is a kubeconfig for s with its CA inline and tok as the bearer token.
func (s *spoke) kubeconfig(tok string) []byte {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: spoke
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: ork
  user:
    token: %s
contexts:
- name: spoke
  context: {cluster: spoke, user: ork}
current-context: spoke
`, s.srv.URL, base64.StdEncoding.EncodeToString(ca), tok)
}

// secrets is a SecretGetter over an in-memory map, whose Secrets the test replaces.
type secrets struct {
	mu sync.Mutex
	m  map[string]*corev1.Secret
}

func (f *secrets) set(ns, name, rv string, data map[string][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*corev1.Secret{}
	}
	f.m[ns+"/"+name] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}, Data: data}
}

func (f *secrets) get(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.m[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

var spokeRef = Ref{Namespace: "ork-system", Name: "spoke-kubeconfig", Key: "kubeconfig"}

func newPool(t *testing.T, s *secrets, opts Options) *Pool {
	t.Helper()
	opts.Secrets = s.get
	p, err := NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestGetBuildsAVerifiedRateLimitedClient(t *testing.T) {
	sp := newSpoke(t)
	var sec secrets
	sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"kubeconfig": sp.kubeconfig(token)})
	p := newPool(t, &sec, Options{})
	c, err := p.Get(t.Context(), spokeRef)
	if err != nil {
		t.Fatal(err)
	}
	if c.Config.QPS != DefaultQPS || c.Config.Burst != DefaultBurst {
		t.Errorf("QPS/Burst = %v/%d, want %v/%d", c.Config.QPS, c.Config.Burst, DefaultQPS, DefaultBurst)
	}
	if c.Config.Insecure {
		t.Error("TLS verification is off; the kubeconfig did not turn it off")
	}
	v, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version over TLS with the kubeconfig's CA: %v", err)
	}
	if v.GitVersion != "v1.35.0" || sp.lastToken() != token {
		t.Errorf("got version %q with token %q", v.GitVersion, sp.lastToken())
	}
	again, err := p.Get(t.Context(), spokeRef)
	if err != nil || again != c {
		t.Errorf("Get with the same resourceVersion gave another client (%v)", err)
	}
}

// The Secret changes (a rotated token): the next Get returns a client built from the new
// bytes, the old one is dropped, and the spoke sees the new token.
func TestGetRebuildsWhenTheSecretChanges(t *testing.T) {
	sp := newSpoke(t)
	var sec secrets
	sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"kubeconfig": sp.kubeconfig("token-one")})
	p := newPool(t, &sec, Options{})
	old, err := p.Get(t.Context(), spokeRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Kube.Discovery().ServerVersion(); err != nil || sp.lastToken() != "token-one" {
		t.Fatalf("first client: %v, token %q", err, sp.lastToken())
	}
	sec.set("ork-system", "spoke-kubeconfig", "2", map[string][]byte{"kubeconfig": sp.kubeconfig("token-two")})
	cur, err := p.Get(t.Context(), spokeRef)
	if err != nil {
		t.Fatal(err)
	}
	if cur == old || cur.ResourceVersion != "2" {
		t.Fatalf("Get after the change gave the client of resourceVersion %s", cur.ResourceVersion)
	}
	select {
	case <-old.Done():
	default:
		t.Error("the old client was not dropped")
	}
	if _, err := cur.Kube.Discovery().ServerVersion(); err != nil || sp.lastToken() != "token-two" {
		t.Errorf("new client: %v, token %q, want token-two", err, sp.lastToken())
	}
}

// TLS verification is the kubeconfig's: without the spoke's CA, the probe fails.
func TestTLSIsVerified(t *testing.T) {
	sp := newSpoke(t)
	// Every httptest TLS server has the same certificate: another CA is made here.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other-ca"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	otherCA := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	good := string(sp.kubeconfig(token))
	i := strings.Index(good, "certificate-authority-data: ") + len("certificate-authority-data: ")
	j := i + strings.Index(good[i:], "\n")
	cfg := good[:i] + otherCA + good[j:]
	var sec secrets
	sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"kubeconfig": []byte(cfg)})
	p := newPool(t, &sec, Options{})
	err = p.Probe(t.Context(), spokeRef)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("probe with the wrong CA: %v, want a certificate error", err)
	}
	if !Unreachable(err) {
		t.Errorf("Unreachable(%v) = false", err)
	}
}

func TestProbeFindsADeadSpokeAndItsReturn(t *testing.T) {
	sp := newSpoke(t)
	var sec secrets
	sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"kubeconfig": sp.kubeconfig(token)})
	now := time.Unix(1000, 0)
	p := newPool(t, &sec, Options{Now: func() time.Time { return now }})
	if failed := p.ProbeAll(t.Context()); len(failed) != 0 {
		t.Fatalf("no client yet, nothing to probe; got %v", failed)
	}
	if err := p.Probe(t.Context(), spokeRef); err != nil {
		t.Fatalf("probe of a live spoke: %v", err)
	}
	if ok, _ := p.Reachable(spokeRef); !ok {
		t.Fatal("a live spoke is unreachable")
	}
	sp.srv.Close() // the spoke's apiserver stops
	failed := p.ProbeAll(t.Context())
	if err := failed[spokeRef]; err == nil || !Unreachable(err) {
		t.Fatalf("ProbeAll of a stopped spoke: %v", failed)
	}
	ok, reason := p.Reachable(spokeRef)
	if ok || !strings.Contains(reason, "/readyz") {
		t.Errorf("after a failed probe: reachable %v, reason %q", ok, reason)
	}
	if st := p.StateOf(spokeRef); !st.Since.Equal(now) || st.Failures != 1 {
		t.Errorf("state %+v, want since %v and one failure", st, now)
	}
	if strings.Contains(reason, token) {
		t.Errorf("the reason holds the token: %q", reason)
	}
}

// The breaker refuses at once while open, lets one caller through per backoff, doubles the
// backoff up to the maximum, and closes on a success.
func TestBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPool(t, &secrets{}, Options{MinBackoff: time.Second, MaxBackoff: 4 * time.Second, Now: func() time.Time { return now }})
	step := func(d time.Duration) { now = now.Add(d) }
	want := func(what string, wantOK bool) {
		t.Helper()
		if ok, _ := p.Reachable(spokeRef); ok != wantOK {
			t.Errorf("%s: reachable %v, want %v", what, ok, wantOK)
		}
	}
	want("never reported", true)
	p.Failed(spokeRef, errors.New("connection refused"))
	want("just failed", false)
	step(999 * time.Millisecond)
	want("within the backoff", false)
	step(time.Millisecond)
	want("backoff over: one try", true)
	want("a second caller meanwhile", false)
	for _, wantBackoff := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
		p.Failed(spokeRef, errors.New("connection refused"))
		if got := p.StateOf(spokeRef).Backoff; got != wantBackoff {
			t.Errorf("backoff %v, want %v", got, wantBackoff)
		}
	}
	step(4 * time.Second)
	want("after the capped backoff", true)
	p.Succeeded(spokeRef)
	want("after a success", true)
	if st := p.StateOf(spokeRef); !st.Reachable || st.Failures != 0 || st.Reason != "" {
		t.Errorf("state after success: %+v", st)
	}
}

// A kubeconfig that cannot be used is refused with an error that names the problem and
// never the token.
func TestBadKubeconfigs(t *testing.T) {
	sp := newSpoke(t)
	good := string(sp.kubeconfig(token))
	user := "    token: " + token + "\n"
	for _, tc := range []struct {
		name, kubeconfig, want string
	}{
		{"empty", "", "empty"},
		{"too big", strings.Repeat("#", MaxKubeconfigBytes+1), "more than"},
		{"not YAML", "users: [\n  token: " + token + "\n  {{", "does not parse"},
		{"token where a list is", "apiVersion: v1\nkind: Config\nusers: " + token + "\n", "does not parse"},
		{"no current context", strings.Replace(good, "current-context: spoke", "", 1), "no current-context"},
		{"unknown current context", strings.Replace(good, "current-context: spoke", "current-context: other", 1), "names no context"},
		{"exec plugin", strings.Replace(good, user, user+"    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}\n", 1), "exec"},
		{"token file", strings.Replace(good, user, user+"    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n", 1), "tokenFile"},
		{"CA file", strings.Replace(good, "    server:", "    certificate-authority: /etc/ca.crt\n    server:", 1), "certificate-authority"},
		{"client key file", strings.Replace(good, user, user+"    client-key: /etc/key.pem\n    client-certificate: /etc/cert.pem\n", 1), "client-key"},
		{"no server", strings.Replace(good, "    server: "+sp.srv.URL+"\n", "", 1), "no server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sec secrets
			sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"kubeconfig": []byte(tc.kubeconfig)})
			p := newPool(t, &sec, Options{})
			_, err := p.Get(t.Context(), spokeRef)
			if err == nil {
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), token) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), token) {
				t.Errorf("the error holds the token: %v", err)
			}
			if !Unreachable(err) {
				t.Errorf("Unreachable(%v) = false: a target with an unusable kubeconfig is unreachable", err)
			}
		})
	}
}

func TestGetErrors(t *testing.T) {
	var sec secrets
	sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"value": []byte("x")})
	p := newPool(t, &sec, Options{})
	for _, tc := range []struct {
		name string
		ref  Ref
		want string
	}{
		{"local", Ref{}, ErrLocal.Error()},
		{"no Secret", Ref{Namespace: "ork-system", Name: "gone", Key: "kubeconfig"}, `secrets "gone" not found`},
		{"no key", spokeRef, `no key "kubeconfig"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := p.Get(t.Context(), tc.ref); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	p.Close()
	sec.set("ork-system", "spoke-kubeconfig", "2", map[string][]byte{"kubeconfig": []byte("x")})
	if _, err := p.Get(t.Context(), spokeRef); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Get after Close: %v", err)
	}
}

func TestForgetDropsTheClient(t *testing.T) {
	sp := newSpoke(t)
	var sec secrets
	sec.set("ork-system", "spoke-kubeconfig", "1", map[string][]byte{"kubeconfig": sp.kubeconfig(token)})
	p := newPool(t, &sec, Options{})
	c, err := p.Get(t.Context(), spokeRef)
	if err != nil {
		t.Fatal(err)
	}
	p.Failed(spokeRef, errors.New("x"))
	if got := p.Targets(); len(got) != 1 || got[0] != spokeRef {
		t.Fatalf("Targets() = %v", got)
	}
	p.Forget(spokeRef)
	select {
	case <-c.Done():
	default:
		t.Error("Forget did not drop the client")
	}
	if len(p.Targets()) != 0 || !p.StateOf(spokeRef).Reachable {
		t.Error("Forget kept the target")
	}
}

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "deployments"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.DeadlineExceeded, true},
		{apierrors.NewServiceUnavailable("down"), true},
		{apierrors.NewTimeoutError("slow", 1), true},
		{apierrors.NewConflict(gr, "web", errors.New("x")), false},
		{apierrors.NewForbidden(gr, "web", errors.New("x")), false},
		{&Error{Ref: spokeRef, Err: errors.New("bad kubeconfig")}, true},
	} {
		if got := Unreachable(tc.err); got != tc.want {
			t.Errorf("Unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
