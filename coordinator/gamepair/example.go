package gamepair

import (
	"os"
	"path/filepath"
)

// exampleOpenings are four positions of books/uho-200.epd: enough for the
// small jobs the game kinds register as their Example.
const exampleOpenings = `r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ d6 0 9
rnbqnrk1/pp2bpp1/3p3p/2pPp3/P3P3/2N2N2/1PP1BPPP/R1BQ1RK1 w - - 0 9
r1bqk1nr/1pp2pb1/p1np2pp/4p3/2PPP3/2N1B3/PP1QNPPP/R3KB1R w KQkq - 0 9
rn1qk2r/pp3p2/2ppbn1p/2b1p1p1/2B1P3/2NP1NB1/PPP2PPP/R2QK2R w KQkq - 2 9
`

// ExampleBook writes a small opening book into dir for a game kind's
// workload.Kind.Example and returns its path.
func ExampleBook(dir string) string {
	path := filepath.Join(dir, "example-openings.epd")
	os.WriteFile(path, []byte(exampleOpenings), 0o644)
	return path
}
