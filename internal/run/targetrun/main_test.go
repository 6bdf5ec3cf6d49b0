// Package targetrun_test runs ork's engine in-process on one test apiserver (the hub) with
// the children of its custom resources on a second one (the spoke), whose kubeconfig is in a
// Secret on the hub (docs/multicluster.md).
package targetrun_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orkspace/ork/internal/testenv"
)

var (
	// hub runs ork and holds the custom resources; spoke receives their children. One of
	// each per package: a control plane costs seconds and memory.
	hub, spoke *testenv.Env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv(testenv.SkipEnv) == "1" {
		return testenv.Main(m, &hub)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	s, err := testenv.Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "spoke:", err)
		return 1
	}
	spoke = s
	defer func() {
		if err := spoke.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "spoke:", err)
		}
	}()
	return testenv.Main(m, &hub)
}

// spokeKubeconfig is the spoke's admin kubeconfig (inline certificates), its server
// replaced by server when not empty (a proxy in front of it).
func spokeKubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(spoke.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if server != "" {
		for _, c := range cfg.Clusters {
			c.Server = server
		}
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// putKubeconfig writes the Secret name (key kubeconfig) in the hub's namespace ns.
func putKubeconfig(t *testing.T, ns, name string, kubeconfig []byte) {
	t.Helper()
	_, err := hub.Clientset.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string][]byte{"kubeconfig": kubeconfig},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// spokeNamespace creates the namespace ns on the spoke (ork creates none there).
func spokeNamespace(t *testing.T, ns string) {
	t.Helper()
	_, err := spoke.Clientset.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// tcpProxy forwards a loopback port to the spoke's apiserver and can be cut: down closes
// the listener and every connection (new ones are refused, as when the apiserver is not
// running), up listens on the same port again.
type tcpProxy struct {
	t        testing.TB
	addr     string
	upstream string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

// proxyToSpoke is a proxy in front of the spoke, and the server URL that goes through it.
func proxyToSpoke(t *testing.T) (*tcpProxy, string) {
	u, err := url.Parse(spoke.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, upstream: u.Host, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p, "https://" + p.addr
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
			_ = tc.SetLinger(0)
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
