package jobreport

import (
	"bytes"
	"io"
	"strconv"

	"github.com/arbiter-chess/arbiter/match"
)

// roundTagWriter renumbers the Round tags of one pairing test of a
// cluster tournament as a local tournament numbers them. A pairing test
// numbers its own games "pair.game" (from 1: "3.2" is the second game of
// its third pair), so every pairing's PGN would start again at "1.1"; tag
// gives the tournament's tag of the test's i-th game (from 0). A tag that
// is not "N.1" or "N.2" passes unchanged.
type roundTagWriter struct {
	w       io.Writer
	tag     func(i int) string
	partial []byte
}

// newRoundTagWriter renumbers pairing p's games as schedule s does.
func newRoundTagWriter(w io.Writer, s *match.Schedule, p int) *roundTagWriter {
	return &roundTagWriter{w: w, tag: func(i int) string { return s.PairingGame(p, i).RoundTag() }}
}

func (r *roundTagWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			r.partial = append(r.partial, b...)
			break
		}
		line := b[:i+1]
		if len(r.partial) > 0 {
			line = append(r.partial, line...)
			r.partial = r.partial[:0]
		}
		if _, err := r.w.Write(r.renumber(line)); err != nil {
			return 0, err
		}
		b = b[i+1:]
	}
	return n, nil
}

// flush writes what is left of a last line without a newline.
func (r *roundTagWriter) flush() error {
	if len(r.partial) == 0 {
		return nil
	}
	_, err := r.w.Write(r.renumber(r.partial))
	r.partial = r.partial[:0]
	return err
}

func (r *roundTagWriter) renumber(line []byte) []byte {
	const prefix = `[Round "`
	rest, ok := bytes.CutPrefix(line, []byte(prefix))
	if !ok {
		return line
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return line
	}
	pairText, gameText, ok := bytes.Cut(rest[:end], []byte("."))
	if !ok {
		return line
	}
	pair, err1 := strconv.Atoi(string(pairText))
	game, err2 := strconv.Atoi(string(gameText))
	if err1 != nil || err2 != nil || pair < 1 || game < 1 || game > 2 {
		return line
	}
	tag := r.tag((pair-1)*2 + game - 1)
	return append(append([]byte(prefix), tag...), rest[end:]...)
}
