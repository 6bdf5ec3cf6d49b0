package run_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// countingAPIProxy serves the test apiserver over plain HTTP on loopback, forwarding with
// the admin credentials, and records each request but watches in clock as it arrives: what
// a process given the kubeconfig from throughProxy sends, counted after its own client-side
// limiter.
func countingAPIProxy(t testing.TB, clock *requestClock) *httptest.Server {
	t.Helper()
	upstream, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport: rt,
		// Watches stream: pass each event on at once.
		FlushInterval: -1,
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// client-go lets watches past its limiter (rest.Request.Watch): they are not counted.
		if watch, _ := strconv.ParseBool(r.URL.Query().Get("watch")); !watch {
			clock.record()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// throughProxy edits a kubeconfig to reach the apiserver through s, which holds the
// credentials.
func throughProxy(s *httptest.Server) func(*clientcmdapi.Config) {
	return func(cfg *clientcmdapi.Config) {
		for _, c := range cfg.Clusters {
			c.Server, c.CertificateAuthority, c.CertificateAuthorityData = s.URL, "", nil
		}
		for name := range cfg.AuthInfos {
			cfg.AuthInfos[name] = clientcmdapi.NewAuthInfo()
		}
	}
}
