package nnue

import (
	"math/rand/v2"
	"testing"
)

// TestKernelsAgree compares the kernels in use (AVX2 where the CPU has it)
// with the portable ones on random and extreme values, wrapping included.
func TestKernelsAgree(t *testing.T) {
	if !useAVX2 {
		t.Skip("no assembly kernels on this CPU or platform: the portable ones are the only ones")
	}
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(a *[HiddenSize]int16, lo, hi int) {
		for i := range a {
			a[i] = int16(lo + r.IntN(hi-lo+1))
		}
	}
	for round := 0; round < 200; round++ {
		var s, a, r1, r2, x, w [HiddenSize]int16
		fill(&s, -32768, 32767)
		fill(&a, -32768, 32767)
		fill(&r1, -32768, 32767)
		fill(&r2, -32768, 32767)
		fill(&x, -600, 600)
		fill(&w, -MaxOutputWeight, MaxOutputWeight)
		if round == 0 { // the extremes of the output layer
			for i := range x {
				x[i], w[i] = 32767, MaxOutputWeight
			}
		}
		var d1, d2 [HiddenSize]int16
		addSub(&d1, &s, &a, &r1)
		addSubGeneric(&d2, &s, &a, &r1)
		if d1 != d2 {
			t.Fatal("addSub differs from the portable kernel")
		}
		addSubSub(&d1, &s, &a, &r1, &r2)
		addSubSubGeneric(&d2, &s, &a, &r1, &r2)
		if d1 != d2 {
			t.Fatal("addSubSub differs from the portable kernel")
		}
		if got, want := screluDot(&x, &w), screluDotGeneric(&x, &w); got != want {
			t.Fatalf("screluDot %d, portable %d", got, want)
		}
	}
}

// BenchmarkEvaluatePortable is BenchmarkEvaluate on the portable kernels.
func BenchmarkEvaluatePortable(b *testing.B) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	BenchmarkEvaluate(b)
}

// BenchmarkUpdateQuietPortable is BenchmarkUpdateQuiet on the portable kernels.
func BenchmarkUpdateQuietPortable(b *testing.B) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	BenchmarkUpdateQuiet(b)
}
