package testkit

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address with a port that was free a moment ago. Another
// process could take it before the caller binds it; the caller then fails loudly. Build
// binaries before picking a port, so that the port is not free for a whole build.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
