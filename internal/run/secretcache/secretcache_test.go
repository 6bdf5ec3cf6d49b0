package secretcache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
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
	c := New(kube, 5*time.Second)

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

// Secrets are read once per TTL however many calls need them, concurrent reads share one
// GET, and a failed read is not remembered.
func TestSecretCacheSharesReadsWithinTheTTL(t *testing.T) {
	kube := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "tok", Namespace: "ns"},
		Data:       map[string][]byte{"token": []byte("v1")},
	})
	var gets atomic.Int32
	kube.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		gets.Add(1)
		return false, nil, nil
	})
	now := time.Unix(0, 0)
	c := New(kube, 5*time.Second)
	c.now = func() time.Time { return now }
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if v, err := c.SecretValue(context.Background(), "ns", "tok", "token"); err != nil || string(v) != "v1" {
				t.Errorf("SecretValue = %q, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := gets.Load(); n != 1 {
		t.Errorf("%d GETs for 20 concurrent reads within the TTL, want 1", n)
	}
	now = now.Add(5 * time.Second)
	if _, err := c.SecretValue(context.Background(), "ns", "tok", "token"); err != nil || gets.Load() != 2 {
		t.Errorf("after the TTL: err %v, %d GETs, want a second GET", err, gets.Load())
	}
	if _, err := c.SecretValue(context.Background(), "ns", "missing", "token"); err == nil {
		t.Fatal("a missing Secret read without error")
	}
	if _, err := c.SecretValue(context.Background(), "ns", "missing", "token"); err == nil || gets.Load() != 4 {
		t.Errorf("a failed read was remembered: %d GETs, want 4", gets.Load())
	}
}

// A Secret read once is not held for the life of the process: with a templated secretRef
// name (one Secret per CR) the cache would otherwise grow with every CR ever seen, and keep
// their tokens in memory.
func TestSecretCacheForgetsExpiredSecrets(t *testing.T) {
	var objs []runtime.Object
	for i := range 100 {
		objs = append(objs, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tok-%d", i), Namespace: "ns"},
			Data:       map[string][]byte{"token": []byte("v")},
		})
	}
	now := time.Unix(0, 0)
	c := New(fake.NewClientset(objs...), 5*time.Second)
	c.now = func() time.Time { return now }
	for i := range 100 {
		if _, err := c.SecretValue(context.Background(), "ns", fmt.Sprintf("tok-%d", i), "token"); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(10 * time.Second)
	if _, err := c.SecretValue(context.Background(), "ns", "tok-0", "token"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) != 1 {
		t.Errorf("%d Secrets held after their TTL passed, want only the one just read", len(c.entries))
	}
}
