// Command webapp is the Go SDK's example reconciler: for each WebApp it answers a Deployment
// and a Service built from the spec, as examples/remote/reconciler-go does by hand. It
// listens on --addr (default :8088), reads its token from the file named by
// RECONCILER_TOKEN_FILE on every request, answers /healthz, and exits 0 within 10 s of
// SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/orkspace/ork/sdk/go/reconciler"
)

// shutdownGrace bounds the wait for in-flight reconciles after SIGTERM.
const shutdownGrace = 8 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "webapp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("webapp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8088", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	tokenFile := getenv("RECONCILER_TOKEN_FILE")
	if tokenFile == "" {
		return fmt.Errorf("set RECONCILER_TOKEN_FILE to the file holding the token of the Secret ork reads")
	}
	h, err := newHandler(Reconcile, tokenFile, log)
	if err != nil {
		return err
	}
	log.Info("listening", "addr", *addr)
	return reconciler.Serve(ctx, *addr, h, shutdownGrace)
}

// newHandler serves fn with the token of tokenFile, warning when ork speaks another major
// contract version.
func newHandler(fn reconciler.Func, tokenFile string, log *slog.Logger) (*reconciler.Handler, error) {
	return reconciler.NewHandler(fn, reconciler.HandlerOptions{
		TokenFile: tokenFile,
		Logger:    log,
		OnContractMismatch: func(v string) {
			log.Warn("ork speaks another wire contract: update the SDK", "ork", v, "sdk", reconciler.ContractVersion)
		},
	})
}
