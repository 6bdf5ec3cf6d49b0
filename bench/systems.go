package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// running is a system under test: a process of its own, so that its CPU and memory are
// read from /proc alone.
type running struct {
	cmd  *exec.Cmd
	feed func(createdCR) // hands a created CR to a system that has no informer
	done chan error
	log  *os.File
}

func (r *running) stats() (procStats, error) { return readProc(r.cmd.Process.Pid) }

func (r *running) stop() error {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		return err
	case <-time.After(time.Minute):
		_ = r.cmd.Process.Kill()
		return errors.New("did not stop within a minute of SIGTERM")
	}
}

func start(cmd *exec.Cmd, logPath string) (*running, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	r := &running{cmd: cmd, feed: func(createdCR) {}, done: make(chan error, 1), log: log}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	go func() { r.done <- cmd.Wait(); log.Close() }()
	return r, nil
}

// startOrk runs `ork run` with its default flags (plus extra) on the cluster and waits
// until /readyz says its caches synced.
func startOrk(ctx context.Context, c *cluster, bin, endpoint string, extra []string) (*running, error) {
	return startOrkWith(ctx, c, bin, c.w.katalog(endpoint), extra)
}

// startOrkWith is startOrk with the Katalog doc.
func startOrkWith(ctx context.Context, c *cluster, bin, doc string, extra []string) (*running, error) {
	katalog := filepath.Join(c.dir, "katalog.yaml")
	if err := os.WriteFile(katalog, []byte(doc), 0o600); err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"run", "-f", katalog, "--kubeconfig", c.env.Kubeconfig, "--namespace", c.ns,
		"--health-addr", health, "--metrics-addr="}, extra...)
	r, err := start(exec.Command(bin, args...), filepath.Join(c.dir, "ork.log"))
	if err != nil {
		return nil, err
	}
	if err := r.waitReady(ctx, "ork", health); err != nil {
		return nil, err
	}
	return r, nil
}

// readyPoll is how often a system's readiness is polled: a restart's catch-up counts from
// ready, and its workers start when the caches sync, so a coarse poll would hide their first
// passes from it.
const readyPoll = 10 * time.Millisecond

// waitReady waits until the system's /readyz on addr answers 200 (its caches synced), so
// that no system's start-up is counted in its convergence; it stops the system on failure.
func (r *running) waitReady(ctx context.Context, name, addr string) error {
	probe := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-r.done:
			return fmt.Errorf("%s exited before it was ready: %v (log %s)", name, err, r.log.Name())
		case <-ctx.Done():
			_ = r.stop()
			return ctx.Err()
		case <-time.After(readyPoll):
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
		if err != nil {
			return err
		}
		res, err := probe.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	_ = r.stop()
	return fmt.Errorf("%s not ready within 2 minutes (log %s)", name, r.log.Name())
}

// startCeiling runs this program as ceiling kind (runCeiling) with workers goroutines, and
// feeds it each CR as soon as it is created, once its connection is up.
func startCeiling(ctx context.Context, c *cluster, kind string, workers int) (*running, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-mode=ceiling", "-ceiling", kind, "-workers", strconv.Itoa(workers),
		"-workload", c.w.name, "-kubeconfig", c.env.Kubeconfig, "-namespace", c.ns, "-health-addr", health)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := start(cmd, filepath.Join(c.dir, fmt.Sprintf("ceiling-%s-%d.log", kind, workers)))
	if err != nil {
		return nil, err
	}
	crs := make(chan createdCR, 1<<16)
	go func() {
		for cr := range crs {
			fmt.Fprintln(stdin, cr.plural, cr.name, cr.uid)
		}
	}()
	r.feed = func(cr createdCR) { crs <- cr }
	if err := r.waitReady(ctx, "ceiling "+kind, health); err != nil {
		return nil, err
	}
	return r, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
