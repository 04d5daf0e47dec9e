// Package nnue is the embedded engine's efficiently updatable neural
// network evaluation: a (768→HiddenSize)×2→1 perspective net with a squared
// clipped ReLU (SCReLU), quantised to int16, in exactly the layout bullet
// (github.com/jw1912/bullet) writes for its examples/simple.rs, so a net
// trained there with the same architecture loads here unchanged, and a net
// trained by `arbiter train` loads into bullet's reference inference.
//
// File layout (little-endian int16 throughout, no header):
//
//	feature weights  768 × HiddenSize   column-major: the HiddenSize weights of feature 0, then of feature 1, …  (× QA)
//	feature biases   HiddenSize                                                                                  (× QA)
//	output weights   2 × HiddenSize     side to move's half first, then the other side's                        (× QB)
//	output bias      1                                                                                            (× QA·QB)
//	padding          to a multiple of 64 bytes, with the bytes "bulletbullet…" (as bullet pads)
//
// Feature index (bullet's Chess768), per perspective: 384·(piece is the
// perspective's opponent's) + 64·(pawn 0 … king 5) + square, the square
// flipped vertically (s^56) for Black's perspective.
//
// The package does no I/O beyond reading a given byte slice; the engine's
// EvalFile option reads the file.
package nnue

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Architecture constants. HiddenSize 128 is bullet's simple example: on a
// 2-core machine with no SIMD in portable Go, every accumulator update and
// every evaluation costs time proportional to it, and the first nets, from
// the farm's first millions of positions, gain little from more width.
const (
	Inputs     = 768
	HiddenSize = 128
	QA         = 255 // feature-transformer quantisation (and the SCReLU clip)
	QB         = 64  // output-layer quantisation
	Scale      = 400 // network output × Scale = centipawns (bullet's eval scale)
)

// MaxOutputWeight bounds the output weights a net may have: clamp(x)·w
// must fit an int16 (255 × 128) and the output sum an int32, as SIMD
// inference computes them. bullet's default clipping (±1.98 × QB = ±127)
// stays inside.
const MaxOutputWeight = 128

// payloadBytes is the size of the weights before padding.
func payloadBytes(hidden int) int { return 2 * (Inputs*hidden + hidden + 2*hidden + 1) }

// fileBytes is the size of a saved net of the given width: the payload
// padded to 64 bytes.
func fileBytes(hidden int) int { return (payloadBytes(hidden) + 63) / 64 * 64 }

// FileSize is the exact size of a net file of this architecture.
var FileSize = fileBytes(HiddenSize)

// Net is a quantised network.
type Net struct {
	FeatureWeights [Inputs][HiddenSize]int16
	FeatureBias    [HiddenSize]int16
	OutputWeights  [2 * HiddenSize]int16
	OutputBias     int16
}

// Architecture describes this package's net for error messages and docs.
func Architecture() string {
	return fmt.Sprintf("(%d→%d)×2→1 SCReLU, QA=%d QB=%d, %d bytes", Inputs, HiddenSize, QA, QB, FileSize)
}

const padPattern = "bullet"

// Load reads a net in the layout above. It refuses data of the wrong size
// (naming the width that size would mean, if any) and padding that is not
// bullet's, which is what a file of another format or a truncated net shows.
func Load(data []byte) (*Net, error) {
	if err := CheckSize(int64(len(data))); err != nil {
		return nil, err
	}
	pay := payloadBytes(HiddenSize)
	for i, b := range data[pay:] {
		if b != padPattern[i%len(padPattern)] {
			return nil, fmt.Errorf("net padding at byte %d is %#02x, want %q (bullet's padding): not a net of this architecture", pay+i, b, padPattern[i%len(padPattern)])
		}
	}
	n := new(Net)
	off := 0
	next := func() int16 {
		v := int16(binary.LittleEndian.Uint16(data[off:]))
		off += 2
		return v
	}
	for f := range n.FeatureWeights {
		for i := range n.FeatureWeights[f] {
			n.FeatureWeights[f][i] = next()
		}
	}
	for i := range n.FeatureBias {
		n.FeatureBias[i] = next()
	}
	for i := range n.OutputWeights {
		n.OutputWeights[i] = next()
	}
	n.OutputBias = next()
	for i, w := range n.OutputWeights {
		if w > MaxOutputWeight || w < -MaxOutputWeight {
			return nil, fmt.Errorf("output weight %d is %d, beyond ±%d (±1.98 × QB, bullet's clipping): not a net of this architecture, or trained without weight clipping", i, w, MaxOutputWeight)
		}
	}
	return n, nil
}

// CheckSize refuses a net file of size bytes unless it is FileSize, naming
// the architecture that size would mean, if any (callers check a file's
// size before reading it).
func CheckSize(size int64) error {
	if size == int64(FileSize) {
		return nil
	}
	msg := fmt.Sprintf("net is %d bytes, want %d for %s", size, FileSize, Architecture())
	if h := widthForSize(size); h > 0 {
		msg += fmt.Sprintf(": its size is that of a (768→%d)×2→1 net, another architecture", h)
	} else if size < int64(FileSize) {
		msg += ": truncated or not a net"
	}
	return fmt.Errorf("%s", msg)
}

// widthForSize returns the hidden width whose bullet file has size n, or 0.
func widthForSize(n int64) int {
	for _, h := range []int{16, 32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048} {
		if h != HiddenSize && int64(fileBytes(h)) == n {
			return h
		}
	}
	return 0
}

// MarshalBinary writes the net in the layout above.
func (n *Net) MarshalBinary() ([]byte, error) {
	buf := make([]byte, 0, FileSize)
	put := func(v int16) { buf = binary.LittleEndian.AppendUint16(buf, uint16(v)) }
	for f := range n.FeatureWeights {
		for _, v := range n.FeatureWeights[f] {
			put(v)
		}
	}
	for _, v := range n.FeatureBias {
		put(v)
	}
	for _, v := range n.OutputWeights {
		put(v)
	}
	put(n.OutputBias)
	for i := 0; len(buf) < FileSize; i++ {
		buf = append(buf, padPattern[i%len(padPattern)])
	}
	return buf, nil
}

// FloatNet is a net's float parameters (the trainer's), in the same layout
// as Net before quantisation.
type FloatNet struct {
	FeatureWeights [Inputs][HiddenSize]float32
	FeatureBias    [HiddenSize]float32
	OutputWeights  [2 * HiddenSize]float32
	OutputBias     float32
}

// Quantise rounds f to a Net as bullet's save format does
// (round(value × Q)), refusing a value that does not fit an int16.
func (f *FloatNet) Quantise() (*Net, error) {
	n := new(Net)
	q := func(v float32, scale float64, what string) (int16, error) {
		r := math.Round(float64(v) * scale)
		if r > math.MaxInt16 || r < math.MinInt16 || math.IsNaN(r) {
			return 0, fmt.Errorf("quantising %s: %g × %g does not fit an int16", what, v, scale)
		}
		return int16(r), nil
	}
	var err error
	for i := range f.FeatureWeights {
		for j, v := range f.FeatureWeights[i] {
			if n.FeatureWeights[i][j], err = q(v, QA, "a feature weight"); err != nil {
				return nil, err
			}
		}
	}
	for j, v := range f.FeatureBias {
		if n.FeatureBias[j], err = q(v, QA, "a feature bias"); err != nil {
			return nil, err
		}
	}
	for j, v := range f.OutputWeights {
		if n.OutputWeights[j], err = q(v, QB, "an output weight"); err != nil {
			return nil, err
		}
	}
	if n.OutputBias, err = q(f.OutputBias, QA*QB, "the output bias"); err != nil {
		return nil, err
	}
	for i, w := range n.OutputWeights {
		if w > MaxOutputWeight || w < -MaxOutputWeight {
			return nil, fmt.Errorf("quantising output weight %d: %d is beyond ±%d", i, w, MaxOutputWeight)
		}
	}
	return n, nil
}
