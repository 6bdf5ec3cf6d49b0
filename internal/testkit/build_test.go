package testkit_test

import (
	"os"
	"sync"
	"testing"

	"github.com/orkspace/ork/internal/testkit"
)

// A package asked for by parallel tests is built once; other flags are another build, and
// Remove deletes them all.
func TestBinariesBuildOncePerPackageAndFlags(t *testing.T) {
	var b testkit.Binaries
	const pkg = "./internal/testkit/testdata/hello"
	var wg sync.WaitGroup
	bins := make([]string, 4)
	for i := range bins {
		wg.Go(func() { bins[i] = b.Build(t, pkg) })
	}
	wg.Wait()
	for _, bin := range bins[1:] {
		if bin != bins[0] {
			t.Fatalf("the same package and flags gave two binaries: %s and %s", bins[0], bin)
		}
	}
	first, err := os.Stat(bins[0])
	if err != nil {
		t.Fatal(err)
	}
	if again, err := os.Stat(b.Build(t, pkg)); err != nil || !os.SameFile(first, again) || !again.ModTime().Equal(first.ModTime()) {
		t.Fatalf("a later call rebuilt or moved the binary (%v)", err)
	}
	other := b.Build(t, pkg, "-trimpath")
	if other == bins[0] {
		t.Fatalf("other flags gave the same binary %s", other)
	}
	if err := b.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{bins[0], other} {
		if _, err := os.Stat(bin); !os.IsNotExist(err) {
			t.Errorf("%s still there after Remove (%v)", bin, err)
		}
	}
}
