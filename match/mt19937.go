package match

// mt19937_64 is the 64-bit Mersenne Twister as C++'s std::mt19937_64
// defines it (seeded with one integer): fastchess shuffles its opening
// book with it, and order=fastchess reproduces that shuffle.
type mt19937_64 struct {
	mt  [312]uint64
	idx int
}

const (
	mtN         = 312
	mtM         = 156
	mtMatrixA   = 0xB5026F5AA96619E9
	mtUpperMask = 0xFFFFFFFF80000000
	mtLowerMask = 0x7FFFFFFF
)

func newMT19937_64(seed uint64) *mt19937_64 {
	m := &mt19937_64{idx: mtN}
	m.mt[0] = seed
	for i := 1; i < mtN; i++ {
		m.mt[i] = 6364136223846793005*(m.mt[i-1]^(m.mt[i-1]>>62)) + uint64(i)
	}
	return m
}

func (m *mt19937_64) next() uint64 {
	if m.idx >= mtN {
		for i := 0; i < mtN; i++ {
			x := (m.mt[i] & mtUpperMask) | (m.mt[(i+1)%mtN] & mtLowerMask)
			xA := x >> 1
			if x&1 != 0 {
				xA ^= mtMatrixA
			}
			m.mt[i] = m.mt[(i+mtM)%mtN] ^ xA
		}
		m.idx = 0
	}
	x := m.mt[m.idx]
	m.idx++
	x ^= (x >> 29) & 0x5555555555555555
	x ^= (x << 17) & 0x71D67FFFEDA60000
	x ^= (x << 37) & 0xFFF7EEE000000000
	x ^= x >> 43
	return x
}

// fastchessShuffle shuffles as fastchess's Openings::shuffle
// (app/src/game/book/opening_book.hpp, fastchess 1.8): a Fisher–Yates
// from the front, j = i + r mod (n-i), one draw per position but the last.
func fastchessShuffle[T any](s []T, seed uint64) {
	r := newMT19937_64(seed)
	for i := 0; i+2 <= len(s); i++ {
		j := i + int(r.next()%uint64(len(s)-i))
		s[i], s[j] = s[j], s[i]
	}
}
