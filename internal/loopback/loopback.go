// Package loopback gives tests a loopback address to listen on, or one
// where nothing listens: a server started there later, or a registry that
// is down.
package loopback

import (
	"net"
	"testing"
)

// FreeAddr is a 127.0.0.1 host:port nothing listens on as it returns.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
