package reconciler

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// An in-flight reconcile finishes after the shutdown began; Serve then returns nil.
func TestServeShutsDownGracefully(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- ServeListener(ctx, ln, h, 10*time.Second) }()

	answered := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- string(b)
	}()
	<-started
	cancel()
	close(release)
	if got := <-answered; got != "done" {
		t.Errorf("in-flight request: %q, want done", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// A reconcile that outlives the grace period is cut, and Serve still returns.
func TestServeCutsWhatOutlivesTheGrace(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	h := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // ends when Serve closes the connection
	})
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- ServeListener(ctx, ln, h, 50*time.Millisecond) }()
	go func() {
		if resp, err := http.Get("http://" + ln.Addr().String()); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
