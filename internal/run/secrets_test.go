package run

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// One caller giving up (its pass cancelled at shutdown or by its timeout) does not fail the
// read it started for everyone: a caller that comes next with a live context joins the same
// GET and gets the Secret, and the apiserver is asked once.
func TestSecretReadOutlivesTheCallerThatStartedIt(t *testing.T) {
	entered, release := make(chan struct{}, 4), make(chan struct{})
	var gets atomic.Int32
	apiserver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"tok","namespace":"ns"},"data":{"token":"djE="}}`))
	}))
	defer apiserver.Close()
	defer close(release)
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: apiserver.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := newSecretCache(kube, 5*time.Second)

	first, cancel := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() {
		_, err := c.SecretValue(first, "ns", "tok", "token")
		firstDone <- err
	}()
	<-entered
	cancel()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled caller got %v, want its own context's error", err)
	}
	next := make(chan error, 1)
	go func() {
		v, err := c.SecretValue(context.Background(), "ns", "tok", "token")
		if err == nil && string(v) != "v1" {
			err = errors.New("value " + string(v))
		}
		next <- err
	}()
	release <- struct{}{}
	if err := <-next; err != nil {
		t.Fatalf("the next caller: %v, want the Secret from the read already under way", err)
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("%d GETs, want 1: the cancelled caller's read was abandoned and read again", n)
	}
}
