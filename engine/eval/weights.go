package eval

// The evaluation parameters. Each has a name (its UCI option), a default, a
// range and a tuning step, all in one table (Params) indexed by the
// constants below, so adding a weight means adding one constant and one row.
//
// How the defaults were obtained:
//   - Material and piece-square tables are PeSTO's (Ronald Friederich's
//     Texel-tuned "piece-square tables only" evaluation, as published on the
//     Chess Programming Wiki). They are a well-tested public starting point;
//     the material values are parameters, the square tables stay fixed.
//   - The terms PeSTO lacks (mobility, pawn structure, passed pawns, king
//     safety, bishop pair, rook files, tempo) start from the magnitudes that
//     classical engines publish (Fruit/Toga, CPW-engine, Ethereal's early
//     hand-crafted values), scaled down where the PeSTO tables already
//     capture part of the effect (e.g. the pawn tables already reward
//     advanced pawns, so the passed-pawn bonus is the extra for being
//     passed).
//   - They were then checked (not tuned) in short matches; see
//     docs/engine.md. Tuning them on positions from the cluster's self-play
//     games with SPSA/Texel is the intended next step, and why each weight
//     has a Step.
const (
	PawnMG = iota
	PawnEG
	KnightMG
	KnightEG
	BishopMG
	BishopEG
	RookMG
	RookEG
	QueenMG
	QueenEG

	MobKnightMG
	MobKnightEG
	MobBishopMG
	MobBishopEG
	MobRookMG
	MobRookEG
	MobQueenMG
	MobQueenEG

	DoubledMG
	DoubledEG
	IsolatedMG
	IsolatedEG

	Passed2MG // passed pawn on its 2nd rank (relative)
	Passed2EG
	Passed3MG
	Passed3EG
	Passed4MG
	Passed4EG
	Passed5MG
	Passed5EG
	Passed6MG
	Passed6EG
	Passed7MG
	Passed7EG

	KingAttackKnight // attack units per king-zone square attacked
	KingAttackBishop
	KingAttackRook
	KingAttackQueen
	KingSafetyScale // middlegame penalty = units² × scale / 64
	ShieldNearMG    // own pawn directly in front of the castled king
	ShieldFarMG     // own pawn two squares in front

	BishopPairMG
	BishopPairEG
	RookOpenMG
	RookOpenEG
	RookSemiOpenMG
	RookSemiOpenEG

	TempoMG
	TempoEG

	NumParams
)

// Params is the evaluation's parameter table, indexed by the constants above.
var Params = [NumParams]Param{
	PawnMG:   {"PawnValueMG", 82, 40, 200, 5},
	PawnEG:   {"PawnValueEG", 94, 40, 250, 5},
	KnightMG: {"KnightValueMG", 337, 150, 600, 10},
	KnightEG: {"KnightValueEG", 281, 150, 600, 10},
	BishopMG: {"BishopValueMG", 365, 150, 600, 10},
	BishopEG: {"BishopValueEG", 297, 150, 600, 10},
	RookMG:   {"RookValueMG", 477, 250, 900, 10},
	RookEG:   {"RookValueEG", 512, 250, 900, 10},
	QueenMG:  {"QueenValueMG", 1025, 600, 1600, 20},
	QueenEG:  {"QueenValueEG", 936, 600, 1600, 20},

	MobKnightMG: {"MobKnightMG", 4, 0, 20, 1},
	MobKnightEG: {"MobKnightEG", 4, 0, 20, 1},
	MobBishopMG: {"MobBishopMG", 5, 0, 20, 1},
	MobBishopEG: {"MobBishopEG", 5, 0, 20, 1},
	MobRookMG:   {"MobRookMG", 2, 0, 20, 1},
	MobRookEG:   {"MobRookEG", 4, 0, 20, 1},
	MobQueenMG:  {"MobQueenMG", 1, 0, 20, 1},
	MobQueenEG:  {"MobQueenEG", 2, 0, 20, 1},

	DoubledMG:  {"DoubledPawnMG", 8, 0, 60, 2},
	DoubledEG:  {"DoubledPawnEG", 18, 0, 60, 2},
	IsolatedMG: {"IsolatedPawnMG", 10, 0, 60, 2},
	IsolatedEG: {"IsolatedPawnEG", 10, 0, 60, 2},

	Passed2MG: {"Passed2MG", 0, 0, 100, 2},
	Passed2EG: {"Passed2EG", 5, 0, 100, 2},
	Passed3MG: {"Passed3MG", 0, 0, 100, 2},
	Passed3EG: {"Passed3EG", 8, 0, 100, 2},
	Passed4MG: {"Passed4MG", 5, 0, 150, 3},
	Passed4EG: {"Passed4EG", 18, 0, 150, 3},
	Passed5MG: {"Passed5MG", 15, 0, 200, 3},
	Passed5EG: {"Passed5EG", 35, 0, 200, 3},
	Passed6MG: {"Passed6MG", 30, 0, 250, 4},
	Passed6EG: {"Passed6EG", 60, 0, 250, 4},
	Passed7MG: {"Passed7MG", 40, 0, 300, 5},
	Passed7EG: {"Passed7EG", 80, 0, 300, 5},

	KingAttackKnight: {"KingAttackKnight", 2, 0, 10, 1},
	KingAttackBishop: {"KingAttackBishop", 2, 0, 10, 1},
	KingAttackRook:   {"KingAttackRook", 3, 0, 10, 1},
	KingAttackQueen:  {"KingAttackQueen", 5, 0, 15, 1},
	KingSafetyScale:  {"KingSafetyScale", 16, 0, 64, 2},
	ShieldNearMG:     {"ShieldNearMG", 12, 0, 50, 2},
	ShieldFarMG:      {"ShieldFarMG", 6, 0, 50, 2},

	BishopPairMG:   {"BishopPairMG", 25, 0, 100, 3},
	BishopPairEG:   {"BishopPairEG", 50, 0, 100, 3},
	RookOpenMG:     {"RookOpenFileMG", 25, 0, 80, 2},
	RookOpenEG:     {"RookOpenFileEG", 8, 0, 80, 2},
	RookSemiOpenMG: {"RookSemiOpenFileMG", 12, 0, 80, 2},
	RookSemiOpenEG: {"RookSemiOpenFileEG", 6, 0, 80, 2},

	TempoMG: {"TempoMG", 15, 0, 50, 1},
	TempoEG: {"TempoEG", 5, 0, 50, 1},
}

// Weights is one setting of every evaluation parameter, indexed like Params.
type Weights [NumParams]int

// DefaultWeights returns every parameter at its default.
func DefaultWeights() Weights {
	var w Weights
	for i := range Params {
		w[i] = Params[i].Default
	}
	return w
}
