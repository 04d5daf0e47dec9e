package train

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// Sample is one training position, compact: its pieces as White's
// features (Black's are their mirror images), the side to move, and the
// labels from the side to move's point of view.
type Sample struct {
	feats  [32]uint16
	n      uint8
	stm    engine.Color
	score  int16 // centipawns, side to move
	result uint8 // 0 loss, 1 draw, 2 win, side to move
}

// maxLineBytes caps one data line (a FEN and two numbers fit in far less).
const maxLineBytes = 512

// Dataset is the positions of the training files and a digest of their
// text, which a checkpoint records so that a resumed run trains on the
// same data.
type Dataset struct {
	Samples []Sample
	Digest  uint64
}

// ReadFiles reads bullet's text format, one position per line:
//
//	<FEN> | <score in centipawns, White's point of view> | <result: 1.0, 0.5 or 0.0, White's>
//
// (what the farm's DATAGEN writes). Blank lines are skipped; any other line
// that does not parse is an error naming the file and the line number.
func ReadFiles(paths []string) (*Dataset, error) {
	d := &Dataset{}
	h := fnv.New64a()
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		err = d.read(f, path, h)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if len(d.Samples) == 0 {
		return nil, fmt.Errorf("no positions in %s", strings.Join(paths, ", "))
	}
	d.Digest = h.Sum64()
	return d, nil
}

func (d *Dataset) read(r io.Reader, name string, h io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		s, err := ParseLine(text)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		h.Write([]byte(text))
		h.Write([]byte{'\n'})
		d.Samples = append(d.Samples, s)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// ParseLine parses one line of bullet's text format.
func ParseLine(text string) (Sample, error) {
	parts := strings.Split(text, "|")
	if len(parts) != 3 {
		return Sample{}, fmt.Errorf("want \"<FEN> | <score> | <result>\", got %d field(s) separated by '|'", len(parts))
	}
	pos, err := engine.ParseFEN(strings.TrimSpace(parts[0]))
	if err != nil {
		return Sample{}, fmt.Errorf("FEN: %w", err)
	}
	scoreText := strings.TrimSpace(parts[1])
	score, err := strconv.ParseInt(scoreText, 10, 16)
	if err != nil {
		return Sample{}, fmt.Errorf("score %q is not an integer number of centipawns within ±32767", scoreText)
	}
	var result uint8
	switch resultText := strings.TrimSpace(parts[2]); resultText {
	case "1.0", "1":
		result = 2
	case "0.5":
		result = 1
	case "0.0", "0":
		result = 0
	default:
		return Sample{}, fmt.Errorf("result %q: want 1.0, 0.5 or 0.0 (White's point of view)", resultText)
	}
	if n := pos.Occupied().Count(); n > 32 {
		return Sample{}, fmt.Errorf("FEN has %d pieces, at most 32 fit the input", n)
	}
	s := FromPosition(&pos)
	s.score = int16(score)
	s.result = result
	if s.stm == engine.Black {
		s.score = -s.score
		s.result = 2 - s.result
	}
	return s, nil
}

// FromPosition is a sample of pos's pieces without labels.
func FromPosition(pos *engine.Position) Sample {
	s := Sample{stm: pos.SideToMove()}
	for b := pos.Occupied(); b != 0 && s.n < 32; b &= b - 1 {
		sq := engine.Square(bits.TrailingZeros64(uint64(b)))
		s.feats[s.n] = uint16(nnue.FeatureIndex(engine.White, pos.PieceAt(sq), sq))
		s.n++
	}
	return s
}

// mirror turns a White-perspective feature into Black's.
func mirror(f uint16) uint16 {
	if f < 384 {
		return (f + 384) ^ 56
	}
	return (f - 384) ^ 56
}

// perspectives returns the side to move's and the other side's features.
func (s *Sample) perspectives(stm, ntm *[32]uint16) int {
	n := int(s.n)
	for i := 0; i < n; i++ {
		w, b := s.feats[i], mirror(s.feats[i])
		if s.stm == engine.White {
			stm[i], ntm[i] = w, b
		} else {
			stm[i], ntm[i] = b, w
		}
	}
	return n
}
