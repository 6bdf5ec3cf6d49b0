package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// maxProbes bounds the probes in flight in ProbeAll.
const maxProbes = 8

// Probe asks ref's apiserver whether it is ready (GET /readyz, which every identity may
// read, within ProbeTimeout) and feeds the answer to the breaker: a target whose watches
// merely stay silent is found dead without any event. The client is Get's (so a probe also
// picks up a rotated Secret).
func (p *Pool) Probe(ctx context.Context, ref Ref) error {
	c, err := p.Get(ctx, ref)
	if err != nil {
		p.Failed(ref, err)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.ProbeTimeout)
	defer cancel()
	if _, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		err = &Error{Ref: ref, Err: fmt.Errorf("probe /readyz: %w", err)}
		p.Failed(ref, err)
		return err
	}
	p.Succeeded(ref)
	return nil
}

// ProbeAll probes every target that has a client (Targets), a few at a time, and returns
// the failures by target. The engine runs it on a ticker.
func (p *Pool) ProbeAll(ctx context.Context) map[Ref]error {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		out  = map[Ref]error{}
		sema = make(chan struct{}, maxProbes)
	)
	for _, ref := range p.Targets() {
		wg.Go(func() {
			sema <- struct{}{}
			defer func() { <-sema }()
			if err := p.Probe(ctx, ref); err != nil {
				mu.Lock()
				out[ref] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// Unreachable reports whether err says the target cannot be used at all, rather than that
// one request failed: its Secret or kubeconfig (an *Error of the pool), the network
// (refused, reset, timed out, cut), TLS, or an apiserver that is unavailable. The engine
// feeds these to Failed; the others (a conflict, a forbidden, an invalid object) are the
// custom resource's, not the target's.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var te *Error
	var ne net.Error
	switch {
	case errors.As(err, &te), errors.As(err, &ne),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return true
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}
