package train

import (
	"math"
	"math/rand/v2"
	"unsafe"

	"github.com/arbiter-chess/arbiter/engine/nnue"
)

const hidden = nnue.HiddenSize

// params is the float network (and, with the same shape, its gradients and
// the optimiser's moments).
type params = nnue.FloatNet

// weightClip bounds every weight as bullet's AdamW does by default, so
// that the quantised net fits int16 and the engine's output layer (|w·QB|
// ≤ 127) and the accumulators stay far from overflow.
const weightClip = 1.98

// initParams draws the initial weights from seed: uniform in ±1/√fan-in
// (768 for the feature layer, 2·hidden for the output), biases zero.
func initParams(p *params, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x696e6974))
	a := float32(1 / math.Sqrt(nnue.Inputs))
	for f := range p.FeatureWeights {
		for i := range p.FeatureWeights[f] {
			p.FeatureWeights[f][i] = (2*r.Float32() - 1) * a
		}
	}
	b := float32(1 / math.Sqrt(2*hidden))
	for i := range p.OutputWeights {
		p.OutputWeights[i] = (2*r.Float32() - 1) * b
	}
}

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

// target is the training label of s: wdl × result + (1 − wdl) ×
// sigmoid(score / scale), side to move, as bullet computes it.
func target(s *Sample, wdl, scale float32) float32 {
	return wdl*float32(s.result)/2 + (1-wdl)*sigmoid(float32(s.score)/scale)
}

// forward computes the pre-activations of both perspectives and returns the
// output (in units of Scale centipawns).
func forward(p *params, stmF, ntmF []uint16, hs, hn *[hidden]float32) float32 {
	*hs, *hn = p.FeatureBias, p.FeatureBias
	for _, f := range stmF {
		w := &p.FeatureWeights[f]
		for i := range hs {
			hs[i] += w[i]
		}
	}
	for _, f := range ntmF {
		w := &p.FeatureWeights[f]
		for i := range hn {
			hn[i] += w[i]
		}
	}
	out := p.OutputBias
	ws := (*[hidden]float32)(p.OutputWeights[:hidden])
	wn := (*[hidden]float32)(p.OutputWeights[hidden:])
	for i := range hs {
		out += ws[i]*screlu(hs[i]) + wn[i]*screlu(hn[i])
	}
	return out
}

func screlu(x float32) float32 {
	x = min(max(x, 0), 1)
	return x * x
}

func screluGrad(x float32) float32 {
	if x <= 0 || x >= 1 {
		return 0
	}
	return 2 * x
}

// accumulate adds the gradient of one sample's loss (sigmoid(out) − t)²,
// scaled by k, to g and returns the loss.
func accumulate(p, g *params, s *Sample, wdl, scale, k float32) float32 {
	var stm, ntm [32]uint16
	n := s.perspectives(&stm, &ntm)
	var hs, hn [hidden]float32
	out := forward(p, stm[:n], ntm[:n], &hs, &hn)
	y := sigmoid(out)
	t := target(s, wdl, scale)
	d := y - t
	gOut := k * 2 * d * y * (1 - y)
	g.OutputBias += gOut
	ws := (*[hidden]float32)(p.OutputWeights[:hidden])
	wn := (*[hidden]float32)(p.OutputWeights[hidden:])
	gws := (*[hidden]float32)(g.OutputWeights[:hidden])
	gwn := (*[hidden]float32)(g.OutputWeights[hidden:])
	var ds, dn [hidden]float32
	for i := range hs {
		gws[i] += gOut * screlu(hs[i])
		gwn[i] += gOut * screlu(hn[i])
		ds[i] = gOut * ws[i] * screluGrad(hs[i])
		dn[i] = gOut * wn[i] * screluGrad(hn[i])
		g.FeatureBias[i] += ds[i] + dn[i]
	}
	for _, f := range stm[:n] {
		gw := &g.FeatureWeights[f]
		for i := range gw {
			gw[i] += ds[i]
		}
	}
	for _, f := range ntm[:n] {
		gw := &g.FeatureWeights[f]
		for i := range gw {
			gw[i] += dn[i]
		}
	}
	return d * d
}

// loss is one sample's loss without gradients.
func loss(p *params, s *Sample, wdl, scale float32) float32 {
	var stm, ntm [32]uint16
	n := s.perspectives(&stm, &ntm)
	var hs, hn [hidden]float32
	d := sigmoid(forward(p, stm[:n], ntm[:n], &hs, &hn)) - target(s, wdl, scale)
	return d * d
}

// flat views a net's floats as one slice (FloatNet is float32 arrays only,
// so it has no padding): the optimiser and the gradient sums run over it.
func flat(p *params) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), unsafe.Sizeof(*p)/4)
}
