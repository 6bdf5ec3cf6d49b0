package reconciler

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve serves h on addr until ctx ends, then shuts down gracefully: it stops accepting,
// lets in-flight reconciles finish for up to grace, then closes what is left. It returns nil
// after a shutdown that ctx asked for.
func Serve(ctx context.Context, addr string, h http.Handler, grace time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ServeListener(ctx, ln, h, grace)
}

// ServeListener is Serve on a listener the caller opened (a test's loopback port).
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
