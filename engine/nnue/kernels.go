package nnue

// The hot loops, portable: on fixed-size arrays so that the compiler drops
// every bounds check. int16 arithmetic wraps like bullet's reference
// inference. kernels_amd64.go replaces the three that run at every node
// with AVX2 assembly where the CPU has it; these stay the reference.

func add(d, w *[HiddenSize]int16) {
	for i := range d {
		d[i] += w[i]
	}
}

func sub(d, w *[HiddenSize]int16) {
	for i := range d {
		d[i] -= w[i]
	}
}

func addSubGeneric(d, s, a, r *[HiddenSize]int16) {
	for i := range d {
		d[i] = s[i] + a[i] - r[i]
	}
}

func addSubSubGeneric(d, s, a, r1, r2 *[HiddenSize]int16) {
	for i := range d {
		d[i] = s[i] + a[i] - r1[i] - r2[i]
	}
}

// screluDot is Σ clamp(x, 0, QA)² · w, the output layer's half for one
// perspective, at the quantisation QA·QA·QB.
func screluDotGeneric(x, w *[HiddenSize]int16) int64 {
	var sum int64
	for i := range x {
		v := int64(min(max(x[i], 0), QA))
		sum += v * v * int64(w[i])
	}
	return sum
}
