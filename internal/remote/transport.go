package remote

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/orkspace/ork/internal/katalog"
)

// maxCAClients bounds the clients kept for distinct tls.caSecretRef contents: normally one,
// two while a CA rotates, a few if the secret name is a per-CR template.
const maxCAClients = 8

// clientSource hands out the HTTP client for a call. Without tls.caSecretRef the client is
// fixed at New; with it, one client per distinct CA bundle is built and kept, so connections
// are reused between calls and a rotated CA takes effect on the next call.
type clientSource struct {
	fixed    *http.Client
	caSecret *secretRef
	insecure bool

	mu   sync.Mutex
	byCA map[[sha256.Size]byte]*http.Client
}

func newClientSource(at string, src *katalog.File, t *katalog.TLS, override *http.Client) (*clientSource, error) {
	if override != nil {
		return &clientSource{fixed: override}, nil
	}
	if t == nil {
		return &clientSource{fixed: newClient(nil, false)}, nil
	}
	if t.CAFile != "" && t.CASecretRef != nil {
		return nil, fmt.Errorf("%s: set caFile or caSecretRef, not both", at)
	}
	cs := &clientSource{insecure: t.InsecureSkipVerify}
	switch {
	case t.CASecretRef != nil:
		ref, err := newSecretRef(at+".caSecretRef", t.CASecretRef, DefaultCAKey)
		if err != nil {
			return nil, err
		}
		cs.caSecret = ref
		cs.byCA = map[[sha256.Size]byte]*http.Client{}
	case t.CAFile != "":
		path := t.CAFile
		if src != nil {
			path = src.Resolve(path)
		}
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s.caFile: %w", at, err)
		}
		pool, err := certPool(pem)
		if err != nil {
			return nil, fmt.Errorf("%s.caFile %s: %w", at, path, err)
		}
		cs.fixed = newClient(pool, t.InsecureSkipVerify)
	default:
		cs.fixed = newClient(nil, t.InsecureSkipVerify)
	}
	return cs, nil
}

// client returns the client for a call on obj.
func (r *Reconciler) client(ctx context.Context, obj map[string]any) (*http.Client, error) {
	cs := r.clients
	if cs.caSecret == nil {
		return cs.fixed, nil
	}
	pem, err := r.readSecret(ctx, cs.caSecret, obj, "CA", KindTLS)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(pem)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.byCA[sum]; ok {
		return c, nil
	}
	pool, err := certPool(pem)
	if err != nil {
		return nil, callErr(KindTLS, err, "tls.caSecretRef key %q: %v", cs.caSecret.key, err)
	}
	if len(cs.byCA) >= maxCAClients {
		for k, c := range cs.byCA {
			c.CloseIdleConnections()
			delete(cs.byCA, k)
		}
	}
	c := newClient(pool, cs.insecure)
	cs.byCA[sum] = c
	return c, nil
}

// Close drops the idle connections of every client: their goroutines must not outlive the
// engine that made them.
func (r *Reconciler) Close() {
	cs := r.clients
	if cs.fixed != nil {
		cs.fixed.CloseIdleConnections()
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range cs.byCA {
		c.CloseIdleConnections()
	}
}

func certPool(pem []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no PEM certificate found")
	}
	return pool, nil
}

// newClient builds the client for an endpoint. A custom CA pool replaces the system roots
// (as kubeconfig's certificate-authority does): the endpoint is trusted through that CA
// only. Redirects are not followed: net/http would turn the POST into a GET without body.
func newClient(roots *x509.CertPool, insecure bool) *http.Client {
	return newClientWith(roots, insecure, h2Health{readIdle: h2ReadIdleTimeout, ping: h2PingTimeout})
}

// HTTP/2 health check, as client-go sets it for the apiserver: a connection that reads no
// frame for h2ReadIdleTimeout is pinged, and closed when no answer comes within
// h2PingTimeout. Without it a connection that dies silently (a NAT or load balancer that
// dropped it, a frozen peer) holds every call multiplexed on it until the CRD's timeout, and
// the next calls pick the same dead connection.
const (
	h2ReadIdleTimeout = 30 * time.Second
	h2PingTimeout     = 15 * time.Second
)

// h2Health are the HTTP/2 health-check timings of a client.
type h2Health struct{ readIdle, ping time.Duration }

func newClientWith(roots *x509.CertPool, insecure bool, h2 h2Health) *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:             http.ProxyFromEnvironment,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true,
		MaxIdleConns:      100,
		// Every worker talks to the same host; net/http's default of 2 idle connections per
		// host would make the others reconnect on every call.
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig: &tls.Config{
			RootCAs:            roots,
			InsecureSkipVerify: insecure, // only ever the user's explicit tls.insecureSkipVerify
			MinVersion:         tls.VersionTLS12,
		},
	}
	tr.HTTP2 = &http.HTTP2Config{SendPingTimeout: h2.readIdle, PingTimeout: h2.ping}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
