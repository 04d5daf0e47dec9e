//go:build amd64 && !purego

package nnue

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels (kernels_amd64.s); tests turn it off
// to compare them with the portable ones.
var useAVX2 = cpu.X86.HasAVX2

// The assembly is unrolled for 128 hidden neurons: another width does not
// compile until kernels_amd64.s is regenerated for it.
var (
	_ [HiddenSize - 128]struct{}
	_ [128 - HiddenSize]struct{}
)

//go:noescape
func addSubAVX2(d, s, a, r *[HiddenSize]int16)

//go:noescape
func addSubSubAVX2(d, s, a, r1, r2 *[HiddenSize]int16)

// screluDotAVX2 sums in int32 lanes and multiplies clamp(x)·w in int16
// first (as bullet's and most engines' SIMD inference do): exact because
// Load refuses output weights beyond ±MaxOutputWeight, which bounds both.
//
//go:noescape
func screluDotAVX2(x, w *[HiddenSize]int16) int32

func addSub(d, s, a, r *[HiddenSize]int16) {
	if useAVX2 {
		addSubAVX2(d, s, a, r)
		return
	}
	addSubGeneric(d, s, a, r)
}

func addSubSub(d, s, a, r1, r2 *[HiddenSize]int16) {
	if useAVX2 {
		addSubSubAVX2(d, s, a, r1, r2)
		return
	}
	addSubSubGeneric(d, s, a, r1, r2)
}

func screluDot(x, w *[HiddenSize]int16) int64 {
	if useAVX2 {
		return int64(screluDotAVX2(x, w))
	}
	return screluDotGeneric(x, w)
}
