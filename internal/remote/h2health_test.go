package remote

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An HTTP/2 connection that dies silently (a dropped NAT entry, a frozen peer) is found by
// the ping health check and closed: a call on it fails at once instead of waiting out its
// timeout, and the next call opens a new connection. Without the health check the frozen
// call would wait for its context's 30 s deadline; with pings every 200 ms it ends in about
// half a second, so the deadline leaves a 60-fold slack for a loaded machine.
func TestSilentlyDeadHTTP2ConnectionIsDropped(t *testing.T) {
	srv := httptest.NewUnstartedServer(answer(200, `{"result":"ok"}`))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	proxy := newFreezingProxy(t, srv.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	client := newClientWith(roots, false, h2Health{readIdle: 200 * time.Millisecond, ping: 200 * time.Millisecond})
	t.Cleanup(client.CloseIdleConnections)
	url := "https://" + proxy.addr() + "/reconcile"

	call := func() (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := call()
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("first call spoke %s, want HTTP/2 (the test is about HTTP/2's health check)", resp.Proto)
	}
	proxy.freeze()
	if _, err := call(); err != nil && errorsIsDeadline(err) {
		t.Fatalf("the call on the frozen connection waited out its deadline: no health check (%v)", err)
	}
	if _, err := call(); err != nil {
		t.Fatalf("the call after the dead connection was dropped: %v", err)
	}
	if n := proxy.conns.Load(); n < 2 {
		t.Errorf("%d connections, want a new one after the frozen one was dropped", n)
	}
}

func errorsIsDeadline(err error) bool {
	return err != nil && (strings.Contains(err.Error(), context.DeadlineExceeded.Error()) ||
		strings.Contains(err.Error(), "Client.Timeout"))
}

// freezingProxy forwards TCP connections to a backend; freeze makes every connection open at
// that moment stop forwarding in both directions without closing (a silently dead path),
// while new connections are forwarded normally.
type freezingProxy struct {
	ln     net.Listener
	conns  atomic.Int32
	mu     sync.Mutex
	frozen []chan struct{}
	open   []chan struct{}
}

func newFreezingProxy(t *testing.T, backend string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range append(p.open, p.frozen...) {
			close(c)
		}
		p.open, p.frozen = nil, nil
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", backend)
			if err != nil {
				in.Close()
				continue
			}
			p.conns.Add(1)
			stop := make(chan struct{})
			p.mu.Lock()
			p.open = append(p.open, stop)
			p.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.pipe(in, out, stop)
			}()
		}
	}()
	return p
}

func (p *freezingProxy) addr() string { return p.ln.Addr().String() }

// freeze stops forwarding on every open connection; they stay open until the test ends.
func (p *freezingProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = append(p.frozen, p.open...)
	p.open = nil
}

// pipe copies both ways until stop is closed (the test's end) or the connection is frozen.
func (p *freezingProxy) pipe(in, out net.Conn, stop chan struct{}) {
	defer in.Close()
	defer out.Close()
	copyUntilFrozen := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := src.Read(buf)
			if p.isFrozen(stop) {
				<-stop
				return
			}
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					continue
				}
				return
			}
		}
	}
	done := make(chan struct{}, 2)
	go func() { copyUntilFrozen(out, in); done <- struct{}{} }()
	go func() { copyUntilFrozen(in, out); done <- struct{}{} }()
	<-done
	in.Close()
	out.Close()
	<-done
}

func (p *freezingProxy) isFrozen(stop chan struct{}) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.frozen {
		if c == stop {
			return true
		}
	}
	return false
}
