// Command devcluster runs a local etcd + kube-apiserver (the test control plane of
// internal/testenv) until it is interrupted, for `make demo` and for trying ork by hand.
//
//	go run ./hack/devcluster -kubeconfig /tmp/ork-demo.kubeconfig
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/orkspace/ork/internal/testenv"
)

func main() {
	// A flag set of its own: controller-runtime registers a global -kubeconfig.
	fs := flag.NewFlagSet("devcluster", flag.ExitOnError)
	out := fs.String("kubeconfig", "", "write the admin kubeconfig here (required)")
	_ = fs.Parse(os.Args[1:])
	if *out == "" {
		fmt.Fprintln(os.Stderr, "devcluster: -kubeconfig is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *out); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, out string) error {
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	env, err := testenv.Start(startCtx)
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "devcluster: stop:", err)
		}
	}()
	data, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	// Written last and atomically: its existence tells callers the apiserver is ready.
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	fmt.Printf("devcluster: kube-apiserver %s ready in %.1fs; kubeconfig %s\n", testenv.K8sVersion, env.StartupTime.Seconds(), out)
	<-ctx.Done()
	_ = os.Remove(out)
	return nil
}
