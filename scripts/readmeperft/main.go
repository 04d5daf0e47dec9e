// Command readmeperft runs the README's perft examples with the built
// binary and writes their real output into the README's "perft-examples"
// block (make readme-figures), so that the times and rates shown are the
// build's, not typed. Long outputs keep their first and last lines around
// a "...".
//
//	go run ./scripts/readmeperft -arbiter bin/arbiter -readme README.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/arbiter-chess/arbiter/scripts/readmeblock"
)

// example is one command of the block: its arguments after "arbiter",
// and how many lines of its output to keep at the head and the tail (0:
// all of it).
type example struct {
	args       []string
	head, tail int
}

var examples = []example{
	{args: []string{"perft", "--depth", "6", "--divide"}, head: 1, tail: 4},
	{args: []string{"perft", "--fen", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", "--depth", "5", "--stats"}},
	{args: []string{"perft", "--depth", "2", "--json", "--divide", "--fen", "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"}},
	{args: []string{"perft", "--epd", "engine/testdata/perft/ethereal_fischer960.epd", "--max-depth", "4"}, head: 1, tail: 1},
	{args: []string{"perft", "--fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", "--depth", "2"}},
}

// jsonDivide shortens a --json divide to its first two moves.
var jsonDivide = regexp.MustCompile(`("divide":\{"[a-h1-8qrbn]+":\d+,"[a-h1-8qrbn]+":\d+),[^}]*\}`)

func main() {
	arbiter := flag.String("arbiter", "bin/arbiter", "arbiter binary")
	readme := flag.String("readme", "README.md", "the file whose perft-examples block is rewritten")
	flag.Parse()
	var b strings.Builder
	b.WriteString("```\n")
	for i, ex := range examples {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "$ arbiter %s\n", quote(ex.args))
		cmd := exec.Command(*arbiter, ex.args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		// The last example is bad input: its error is the point.
		if err := cmd.Run(); err != nil && i != len(examples)-1 {
			fmt.Fprintf(os.Stderr, "readmeperft: arbiter %s: %v\n%s", quote(ex.args), err, out.String())
			os.Exit(1)
		}
		text := jsonDivide.ReplaceAllString(strings.TrimRight(out.String(), "\n"), `$1,...}`)
		b.WriteString(shorten(text, ex.head, ex.tail) + "\n")
	}
	b.WriteString("```\n")
	fmt.Fprintf(&b, "(%s)", readmeblock.Machine())
	if err := readmeblock.ReplaceFile(*readme, "perft-examples", b.String()); err != nil {
		fmt.Fprintln(os.Stderr, "readmeperft:", err)
		os.Exit(1)
	}
}

// shorten keeps the first head and last tail lines of text with "..."
// between them (all of it when head is 0 or nothing would be cut).
func shorten(text string, head, tail int) string {
	lines := strings.Split(text, "\n")
	if head == 0 || len(lines) <= head+tail+1 {
		return text
	}
	return strings.Join(append(append(lines[:head:head], "..."), lines[len(lines)-tail:]...), "\n")
}

// quote writes args as a shell would need them: words with spaces or
// quotes in double quotes.
func quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'$") {
			a = `"` + a + `"`
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
