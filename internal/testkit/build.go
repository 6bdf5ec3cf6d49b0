package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Binaries builds Go main packages once per test binary: every test asking for the same
// package with the same flags gets the same file. A test package declares one, and its
// TestMain calls Remove after m.Run, which deletes the directory the binaries are in. The
// zero value is ready to use.
type Binaries struct {
	mu    sync.Mutex
	dir   string
	seq   int
	built map[string]*build
}

// build is one package built with one set of flags; once guards the go build.
type build struct {
	once sync.Once
	bin  string
	err  error
}

// Build returns a binary of pkg (an import path, or a directory relative to the module
// root) built with flags, building it on the first call. The build does not use the
// test's context: other tests may wait for it after this one ends.
func (b *Binaries) Build(t testing.TB, pkg string, flags ...string) string {
	t.Helper()
	key := pkg + "\x00" + strings.Join(flags, "\x00")
	b.mu.Lock()
	if b.built == nil {
		b.built = map[string]*build{}
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "testkit-bin-")
		if err != nil {
			b.mu.Unlock()
			t.Fatal(err)
		}
		b.dir = dir
	}
	bd, ok := b.built[key]
	if !ok {
		// Each build has a directory of its own: two flag sets of one package share a name.
		b.seq++
		bd = &build{bin: filepath.Join(b.dir, strconv.Itoa(b.seq), path.Base(pkg))}
		b.built[key] = bd
	}
	b.mu.Unlock()
	bd.once.Do(func() { bd.err = goBuild(bd.bin, pkg, flags) })
	if bd.err != nil {
		t.Fatal(bd.err)
	}
	return bd.bin
}

// Remove deletes every binary built; TestMain calls it after m.Run.
func (b *Binaries) Remove() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir == "" {
		return nil
	}
	err := os.RemoveAll(b.dir)
	b.dir, b.built = "", nil
	return err
}

// goBuild runs go build in the module root, so that pkg may be a directory relative to it.
func goBuild(out, pkg string, flags []string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	args := append(append([]string{"build", "-o", out}, flags...), pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// ModuleRoot is the directory of the go.mod above the working directory, where go test
// runs a package's tests.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// RemoveAfter removes the binaries once the tests have run and returns the exit code to
// use: TestMain is os.Exit(bins.RemoveAfter(m.Run())). A failed removal fails the run.
func (b *Binaries) RemoveAfter(code int) int {
	if err := b.Remove(); err != nil {
		fmt.Fprintf(os.Stderr, "testkit: remove built binaries: %v\n", err)
		if code == 0 {
			return 1
		}
	}
	return code
}
