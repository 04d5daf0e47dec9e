/* tinyuci: a small UCI chess engine for Arbiter's tests of uploaded
 * engines. Legal move generation on a 0x88 board, a material-and-centre
 * evaluation, fixed-depth alpha-beta. "tinyuci bench" (or the UCI command
 * "bench") searches fixed positions and prints "Nodes searched: N", the
 * engine's signature.
 *
 * Built with -DHOG it allocates without bound when told to think, with
 * -DFORK it starts a process: the misbehaving engines of the worker's
 * resource-limit tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#ifdef FORK
#include <unistd.h>
#endif

enum { EMPTY = 0, P = 1, N, B, R, Q, K };
#define WHITE 8
#define BLACK 16
#define COLOR(p) ((p) & 24)
#define TYPE(p) ((p) & 7)

typedef struct { int from, to, promo; } Move;
typedef struct {
	int sq[128];
	int side;      /* WHITE or BLACK */
	int castle;    /* 1 K, 2 Q, 4 k, 8 q */
	int ep;        /* en-passant target square or -1 */
} Pos;

static long long nodes;
static const int val[7] = {0, 100, 320, 330, 500, 900, 0};
static const int kdir[8] = {1, -1, 16, -16, 15, 17, -15, -17};
static const int ndir[8] = {33, 31, 18, 14, -33, -31, -18, -14};

static int attacked(const Pos *p, int s, int by) {
	int d, i, t;
	int pd = by == WHITE ? -16 : 16; /* a pawn of `by` attacks from s+pd±1 */
	for (i = -1; i <= 1; i += 2) {
		t = s + pd + i;
		if (!(t & 0x88) && p->sq[t] == (by | P)) return 1;
	}
	for (i = 0; i < 8; i++) {
		t = s + ndir[i];
		if (!(t & 0x88) && p->sq[t] == (by | N)) return 1;
		t = s + kdir[i];
		if (!(t & 0x88) && p->sq[t] == (by | K)) return 1;
	}
	for (i = 0; i < 8; i++) {
		d = kdir[i];
		for (t = s + d; !(t & 0x88); t += d) {
			int q = p->sq[t];
			if (!q) continue;
			if (COLOR(q) == by) {
				int ty = TYPE(q);
				if (ty == Q || (i < 4 && ty == R) || (i >= 4 && ty == B)) return 1;
			}
			break;
		}
	}
	return 0;
}

static int king(const Pos *p, int c) {
	int s;
	for (s = 0; s < 128; s++)
		if (!(s & 0x88) && p->sq[s] == (c | K)) return s;
	return -1;
}

static void add(Move *m, int *n, int f, int t, int pr) { m[*n].from = f; m[*n].to = t; m[*n].promo = pr; (*n)++; }

static int gen(const Pos *p, Move *m) {
	int n = 0, s, i, t, us = p->side, them = us ^ 24;
	for (s = 0; s < 128; s++) {
		int pc;
		if (s & 0x88) continue;
		pc = p->sq[s];
		if (COLOR(pc) != us) continue;
		switch (TYPE(pc)) {
		case P: {
			int fw = us == WHITE ? 16 : -16, rank = s >> 4;
			int last = us == WHITE ? 6 : 1, first = us == WHITE ? 1 : 6;
			t = s + fw;
			if (!(t & 0x88) && !p->sq[t]) {
				if (rank == last) { add(m, &n, s, t, Q); add(m, &n, s, t, R); add(m, &n, s, t, B); add(m, &n, s, t, N); }
				else {
					add(m, &n, s, t, 0);
					if (rank == first && !p->sq[t + fw]) add(m, &n, s, t + fw, 0);
				}
			}
			for (i = -1; i <= 1; i += 2) {
				t = s + fw + i;
				if (t & 0x88) continue;
				if ((p->sq[t] && COLOR(p->sq[t]) == them) || t == p->ep) {
					if (rank == last) { add(m, &n, s, t, Q); add(m, &n, s, t, R); add(m, &n, s, t, B); add(m, &n, s, t, N); }
					else add(m, &n, s, t, 0);
				}
			}
			break;
		}
		case N: case K: {
			const int *dir = TYPE(pc) == N ? ndir : kdir;
			for (i = 0; i < 8; i++) {
				t = s + dir[i];
				if (!(t & 0x88) && COLOR(p->sq[t]) != us) add(m, &n, s, t, 0);
			}
			if (TYPE(pc) == K) {
				int home = us == WHITE ? 4 : 0x74, ks = us == WHITE ? 1 : 4, qs = us == WHITE ? 2 : 8;
				if (s == home && !attacked(p, s, them)) {
					if ((p->castle & ks) && !p->sq[s + 1] && !p->sq[s + 2] && p->sq[s + 3] == (us | R) &&
					    !attacked(p, s + 1, them) && !attacked(p, s + 2, them)) add(m, &n, s, s + 2, 0);
					if ((p->castle & qs) && !p->sq[s - 1] && !p->sq[s - 2] && !p->sq[s - 3] && p->sq[s - 4] == (us | R) &&
					    !attacked(p, s - 1, them) && !attacked(p, s - 2, them)) add(m, &n, s, s - 2, 0);
				}
			}
			break;
		}
		default: {
			int from = TYPE(pc) == B ? 4 : 0, to = TYPE(pc) == R ? 4 : 8;
			for (i = from; i < to; i++)
				for (t = s + kdir[i]; !(t & 0x88); t += kdir[i]) {
					if (COLOR(p->sq[t]) == us) break;
					add(m, &n, s, t, 0);
					if (p->sq[t]) break;
				}
		}
		}
	}
	return n;
}

static void make(Pos *p, Move mv) {
	int pc = p->sq[mv.from], us = p->side;
	int fw = us == WHITE ? 16 : -16;
	if (TYPE(pc) == P && mv.to == p->ep) p->sq[mv.to - fw] = EMPTY;
	p->ep = -1;
	if (TYPE(pc) == P && abs(mv.to - mv.from) == 32) p->ep = mv.from + fw;
	if (TYPE(pc) == K && abs(mv.to - mv.from) == 2) {
		if (mv.to > mv.from) { p->sq[mv.from + 1] = p->sq[mv.from + 3]; p->sq[mv.from + 3] = EMPTY; }
		else { p->sq[mv.from - 1] = p->sq[mv.from - 4]; p->sq[mv.from - 4] = EMPTY; }
	}
	p->sq[mv.to] = mv.promo ? (us | mv.promo) : pc;
	p->sq[mv.from] = EMPTY;
	if (mv.from == 4 || mv.to == 4) p->castle &= ~3;
	if (mv.from == 0x74 || mv.to == 0x74) p->castle &= ~12;
	if (mv.from == 0 || mv.to == 0) p->castle &= ~2;
	if (mv.from == 7 || mv.to == 7) p->castle &= ~1;
	if (mv.from == 0x70 || mv.to == 0x70) p->castle &= ~8;
	if (mv.from == 0x77 || mv.to == 0x77) p->castle &= ~4;
	p->side ^= 24;
}

static int legal(const Pos *p, Move *m) {
	Move all[256];
	int n = gen(p, all), i, k = 0;
	for (i = 0; i < n; i++) {
		Pos q = *p;
		make(&q, all[i]);
		if (!attacked(&q, king(&q, p->side), q.side)) m[k++] = all[i];
	}
	return k;
}

static int eval(const Pos *p) {
	int s, e = 0;
	for (s = 0; s < 128; s++) {
		int pc;
		if (s & 0x88) continue;
		pc = p->sq[s];
		if (!pc) continue;
		{
			int f = s & 7, r = s >> 4;
			int centre = 6 - (abs(2 * f - 7) + abs(2 * r - 7)) / 2;
			int v = val[TYPE(pc)] + (TYPE(pc) == K ? 0 : 2 * centre);
			e += COLOR(pc) == WHITE ? v : -v;
		}
	}
	return p->side == WHITE ? e : -e;
}

static int search(const Pos *p, int depth, int alpha, int beta, int ply, Move *best) {
	Move m[256];
	int n, i;
	nodes++;
	if (depth == 0) return eval(p);
	n = legal(p, m);
	if (n == 0) return attacked(p, king(p, p->side), p->side ^ 24) ? -30000 + ply : 0;
	/* captures first */
	for (i = 0; i < n; i++)
		if (p->sq[m[i].to]) { Move t = m[0]; m[0] = m[i]; m[i] = t; break; }
	for (i = 0; i < n; i++) {
		Pos q = *p;
		int sc;
		make(&q, m[i]);
		sc = -search(&q, depth - 1, -beta, -alpha, ply + 1, NULL);
		if (sc > alpha) {
			alpha = sc;
			if (best) *best = m[i];
			if (alpha >= beta) break;
		}
	}
	if (best && alpha == -1000000) *best = m[0];
	return alpha;
}

static void setfen(Pos *p, const char *fen) {
	int r = 7, f = 0;
	const char *c = fen;
	memset(p, 0, sizeof *p);
	p->ep = -1;
	for (; *c && *c != ' '; c++) {
		if (*c == '/') { r--; f = 0; continue; }
		if (isdigit((unsigned char)*c)) { f += *c - '0'; continue; }
		{
			const char *pcs = "pnbrqk";
			const char *x = strchr(pcs, tolower((unsigned char)*c));
			if (x && f < 8 && r >= 0) p->sq[r * 16 + f] = (int)(x - pcs + 1) | (isupper((unsigned char)*c) ? WHITE : BLACK);
			f++;
		}
	}
	while (*c == ' ') c++;
	p->side = *c == 'b' ? BLACK : WHITE;
	while (*c && *c != ' ') c++;
	while (*c == ' ') c++;
	for (; *c && *c != ' '; c++) {
		if (*c == 'K') p->castle |= 1;
		if (*c == 'Q') p->castle |= 2;
		if (*c == 'k') p->castle |= 4;
		if (*c == 'q') p->castle |= 8;
	}
	while (*c == ' ') c++;
	if (*c >= 'a' && *c <= 'h' && c[1] >= '1' && c[1] <= '8') p->ep = (c[1] - '1') * 16 + (c[0] - 'a');
}

static void movestr(Move m, char *s) {
	s[0] = 'a' + (m.from & 7); s[1] = '1' + (m.from >> 4);
	s[2] = 'a' + (m.to & 7); s[3] = '1' + (m.to >> 4);
	s[4] = m.promo ? " pnbrqk"[m.promo] : 0; s[5] = 0;
}

static const char *startfen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

static void position(Pos *p, char *line) {
	char *mv = strstr(line, " moves");
	if (mv) *mv = 0;
	if (strstr(line, "startpos")) setfen(p, startfen);
	else {
		char *f = strstr(line, "fen ");
		if (f) setfen(p, f + 4);
	}
	if (mv) {
		char *tok = strtok(mv + 6, " \n");
		for (; tok; tok = strtok(NULL, " \n")) {
			Move m[256];
			int n = legal(p, m), i;
			for (i = 0; i < n; i++) {
				char s[6];
				movestr(m[i], s);
				if (!strcmp(s, tok)) { make(p, m[i]); break; }
			}
		}
	}
}

static void bench(void) {
	static const char *fens[] = {
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
		"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
	};
	unsigned i;
	nodes = 0;
	for (i = 0; i < sizeof fens / sizeof *fens; i++) {
		Pos p;
		Move b;
		setfen(&p, fens[i]);
		search(&p, 3, -1000000, 1000000, 0, &b);
	}
	printf("Nodes searched: %lld\n", nodes);
	fflush(stdout);
}

int main(int argc, char **argv) {
	char line[65536];
	Pos pos;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "bench")) { bench(); return 0; }
	setfen(&pos, startfen);
	while (fgets(line, sizeof line, stdin)) {
		if (!strncmp(line, "uci", 3) && (line[3] == '\n' || line[3] == '\r' || !line[3])) {
			printf("id name tinyuci\nid author Arbiter tests\nuciok\n");
		} else if (!strncmp(line, "isready", 7)) printf("readyok\n");
		else if (!strncmp(line, "ucinewgame", 10)) setfen(&pos, startfen);
		else if (!strncmp(line, "position", 8)) position(&pos, line);
		else if (!strncmp(line, "go", 2)) {
			Move b = {0, 0, 0}, m[256];
			char s[6];
#ifdef HOG
			for (;;) {
				char *h = malloc(1 << 20);
				if (!h) return 3;
				memset(h, 1, 1 << 20);
			}
#endif
#ifdef FORK
			if (fork() == 0) _exit(0);
#endif
			if (legal(&pos, m) == 0) { printf("bestmove 0000\n"); continue; }
			b = m[0];
			search(&pos, 3, -1000000, 1000000, 0, &b);
			movestr(b, s);
			printf("info depth 3 nodes %lld\nbestmove %s\n", nodes, s);
		} else if (!strncmp(line, "bench", 5)) bench();
		else if (!strncmp(line, "quit", 4)) break;
	}
	return 0;
}
