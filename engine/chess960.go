package engine

import "fmt"

// Chess960Positions is the number of Chess960 start positions.
const Chess960Positions = 960

// knightPairs are the squares (among the five left after bishops and
// queen, from the a-side) of the two knights, by the Scharnagl numbering's
// knight digit 0..9.
var knightPairs = [10][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}

// Chess960BackRank is White's back rank ("RNBQKBNR" for 518) of Chess960
// start position n in Scharnagl's numbering 0..959: n mod 4 places the
// light-squared bishop on b, d, f or h; the next base-4 digit the
// dark-squared one on a, c, e or g; the next base-6 digit the queen on the
// nth free square; what is left (0..9) the knights; rook, king, rook fill
// the last three squares in that order.
func Chess960BackRank(n int) (string, error) {
	if n < 0 || n >= Chess960Positions {
		return "", fmt.Errorf("Chess960 start position %d: must be between 0 and %d", n, Chess960Positions-1)
	}
	var rank [8]byte
	rank[2*(n%4)+1] = 'B'
	n /= 4
	rank[2*(n%4)] = 'B'
	n /= 4
	free := func() []int {
		var f []int
		for i, c := range rank {
			if c == 0 {
				f = append(f, i)
			}
		}
		return f
	}
	rank[free()[n%6]] = 'Q'
	n /= 6
	f := free()
	rank[f[knightPairs[n][0]]], rank[f[knightPairs[n][1]]] = 'N', 'N'
	f = free()
	rank[f[0]], rank[f[1]], rank[f[2]] = 'R', 'K', 'R'
	return string(rank[:]), nil
}

// Chess960StartFEN is the FEN of Chess960 start position n (Scharnagl's
// numbering, see Chess960BackRank), castling in Shredder-FEN (the rooks'
// files), White to move.
func Chess960StartFEN(n int) (string, error) {
	rank, err := Chess960BackRank(n)
	if err != nil {
		return "", err
	}
	var rooks []byte
	for i := 7; i >= 0; i-- {
		if rank[i] == 'R' {
			rooks = append(rooks, byte('A'+i))
		}
	}
	castling := string(rooks) + string(rooks[0]+'a'-'A') + string(rooks[1]+'a'-'A')
	black := make([]byte, 8)
	for i := range rank {
		black[i] = rank[i] + 'a' - 'A'
	}
	return fmt.Sprintf("%s/pppppppp/8/8/8/8/PPPPPPPP/%s w %s - 0 1", black, rank, castling), nil
}
