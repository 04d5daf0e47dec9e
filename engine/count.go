package engine

import (
	"math/big"
	"math/bits"
)

// Count is an exact unsigned 128-bit node count. perft(14) of the start
// position already exceeds 2^64; 2^128 is out of reach of any computation.
type Count struct{ Hi, Lo uint64 }

// CountOf returns n as a Count.
func CountOf(n uint64) Count { return Count{Lo: n} }

// Add returns c + n.
func (c Count) Add(n uint64) Count {
	lo, carry := bits.Add64(c.Lo, n, 0)
	return Count{Hi: c.Hi + carry, Lo: lo}
}

// AddCount returns c + d.
func (c Count) AddCount(d Count) Count {
	lo, carry := bits.Add64(c.Lo, d.Lo, 0)
	return Count{Hi: c.Hi + d.Hi + carry, Lo: lo}
}

// MulAdd returns c + a*b (a multiplicity times a subtree count).
func (c Count) MulAdd(a, b uint64) Count {
	hi, lo := bits.Mul64(a, b)
	return c.AddCount(Count{Hi: hi, Lo: lo})
}

// IsUint64 reports whether c fits in a uint64.
func (c Count) IsUint64() bool { return c.Hi == 0 }

// Big returns c as a big.Int.
func (c Count) Big() *big.Int {
	b := new(big.Int).SetUint64(c.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(c.Lo))
}

// String prints c in decimal.
func (c Count) String() string { return c.Big().String() }

// Float returns c as an approximate float64 (for rates, never for results).
func (c Count) Float() float64 { return float64(c.Hi)*18446744073709551616.0 + float64(c.Lo) }

// ParseCount reads a decimal count.
func ParseCount(s string) (Count, bool) {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok || b.Sign() < 0 || b.BitLen() > 128 {
		return Count{}, false
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(^uint64(0)))
	hi := new(big.Int).Rsh(b, 64)
	return Count{Hi: hi.Uint64(), Lo: lo.Uint64()}, true
}
