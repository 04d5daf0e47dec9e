// Command caps prints, one a line, what a worker made in a program
// that links the perft kind and not the test or SPSA kinds offers for
// its runners (worker.Worker.Capabilities). Built with -tags gamepairs it
// links worker/gamepairs too: the control of TestNoGamePairsWithoutTheKinds.
package main

import (
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	_ "github.com/arbiter-chess/arbiter/kinds/perft"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/worker"
)

func main() {
	// The worker is only made, never run: it dials nothing.
	conn, err := grpc.NewClient("passthrough:///unused", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w, err := worker.New(worker.Config{Conn: conn, Threads: 1, HashMB: 1, Builtin: builtin.New})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, c := range w.Capabilities() {
		fmt.Println(c)
	}
}
