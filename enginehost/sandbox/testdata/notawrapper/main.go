// Command notawrapper is a program whose main forgets sandbox.RunIfWrapper
// and probes the sandbox with itself as the wrapper, as a test binary
// without TestMain whose tests start a worker does. Each run appends a
// line to the file named by NOTAWRAPPER_COUNT.
package main

import (
	"fmt"
	"os"

	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
)

func main() {
	if f, err := os.OpenFile(os.Getenv("NOTAWRAPPER_COUNT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	self, _ := os.Executable()
	_, err := sandbox.Probe(self)
	fmt.Println("probe:", err)
}
