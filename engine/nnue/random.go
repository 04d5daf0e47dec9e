package nnue

import "math/rand/v2"

// NewRandom returns a net with random weights of realistic magnitude,
// deterministic for seed: for tests and speed measurements before a trained
// net exists. It plays badly.
func NewRandom(seed uint64) *Net {
	r := rand.New(rand.NewPCG(seed, 0x6e6e7565))
	n := new(Net)
	for f := range n.FeatureWeights {
		for i := range n.FeatureWeights[f] {
			n.FeatureWeights[f][i] = int16(r.IntN(97) - 48)
		}
	}
	for i := range n.FeatureBias {
		n.FeatureBias[i] = int16(r.IntN(129))
	}
	for i := range n.OutputWeights {
		n.OutputWeights[i] = int16(r.IntN(129) - 64)
	}
	n.OutputBias = int16(r.IntN(2001) - 1000)
	return n
}
