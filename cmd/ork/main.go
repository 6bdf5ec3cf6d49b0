// Command ork runs Kubernetes operators declared in a Katalog.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/orkspace/ork/internal/cli"
	"github.com/orkspace/ork/internal/output"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], output.SystemStreams())
	stop()
	os.Exit(code)
}
