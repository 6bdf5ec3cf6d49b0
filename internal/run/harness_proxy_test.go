package run_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tcpProxy forwards a port to another address and can be cut: down closes the listener and
// every connection (new ones are refused, as when the server is not running), up listens on
// the same port again.
type tcpProxy struct {
	t        testing.TB
	addr     string
	upstream string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func newTCPProxy(t testing.TB, upstream string) *tcpProxy {
	p := &tcpProxy{t: t, upstream: upstream, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *tcpProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	p.close(c, up)
}

// track registers a connection pair, unless the proxy went down meanwhile.
func (p *tcpProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *tcpProxy) close(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

// down refuses new connections and cuts every open one.
func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, not a polite close
		}
		c.Close()
		delete(p.conns, c)
	}
}

// up listens on the same port again.
func (p *tcpProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy up again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

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
