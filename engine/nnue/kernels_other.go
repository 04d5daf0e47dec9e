//go:build !amd64 || purego

package nnue

var useAVX2 = false

func addSub(d, s, a, r *[HiddenSize]int16) { addSubGeneric(d, s, a, r) }

func addSubSub(d, s, a, r1, r2 *[HiddenSize]int16) { addSubSubGeneric(d, s, a, r1, r2) }

func screluDot(x, w *[HiddenSize]int16) int64 { return screluDotGeneric(x, w) }
