package proctest

import (
	"net"
	"sync"
	"testing"
)

var (
	handedMu sync.Mutex
	handed   = map[string]bool{}
)

// FreeAddr returns a loopback address (127.0.0.1:PORT) that nothing
// listened on a moment ago, for a program the test starts to listen on.
// The kernel may give a port just closed to the next bind, so two calls
// could return the same address, and a test that gave it to two listeners
// of one process (say --listen and --http) would fail at random; no
// address is returned twice in one test binary.
func FreeAddr(t testing.TB) string {
	t.Helper()
	handedMu.Lock()
	defer handedMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if !handed[addr] {
			handed[addr] = true
			return addr
		}
	}
	t.Fatal("FreeAddr: the kernel gave 100 addresses already handed out")
	return ""
}
