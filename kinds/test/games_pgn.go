package test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/engine"
)

// A game's PGN as the viewer needs it: its tags, and each ply replayed
// from the start position (or the FEN tag) with the engine's SAN reader,
// so the board after any ply is exact and a move that does not replay is
// named.

type pgnTag struct{ Name, Value string }

type pgnPly struct {
	N       int // ply number from 1
	Move    int // move number
	White   bool
	SAN     string
	UCI     string
	FEN     string // after the ply
	Comment string
}

type pgnGame struct {
	Tags   []pgnTag
	Start  string
	Plies  []pgnPly
	Result string
}

// Tag returns a tag's value ("" when absent).
func (g *pgnGame) Tag(name string) string {
	for _, t := range g.Tags {
		if t.Name == name {
			return t.Value
		}
	}
	return ""
}

// maxPlies bounds a replayed game (the match runner adjudicates far
// earlier).
const maxPlies = 2000

// parsePGN reads one game.
func parsePGN(text string) (*pgnGame, error) {
	g := &pgnGame{}
	lines := strings.Split(text, "\n")
	i := 0
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			if len(g.Tags) > 0 {
				break
			}
			continue
		}
		if !strings.HasPrefix(l, "[") {
			break
		}
		name, value, ok := parseTagLine(l)
		if !ok {
			return nil, fmt.Errorf("line %d: not a PGN tag: %s", i+1, apierr.Q(l))
		}
		g.Tags = append(g.Tags, pgnTag{name, value})
	}
	pos := engine.StartPosition()
	if fen := g.Tag("FEN"); fen != "" {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return nil, fmt.Errorf("FEN tag: %v", err)
		}
		pos = p
	}
	if strings.EqualFold(g.Tag("Variant"), "Chess960") {
		pos.SetChess960(true)
	}
	g.Start = pos.FEN()
	moveNo, white := pos.FullmoveNumber(), pos.SideToMove() == engine.White
	movetext := strings.Join(lines[i:], "\n")
	for _, tok := range tokenize(movetext) {
		if tok.comment {
			if n := len(g.Plies); n > 0 {
				g.Plies[n-1].Comment = strings.TrimSpace(tok.text)
			}
			continue
		}
		t := tok.text
		switch {
		case t == "1-0" || t == "0-1" || t == "1/2-1/2" || t == "*":
			g.Result = t
			continue
		case strings.HasPrefix(t, "$"):
			continue
		}
		if j := strings.LastIndexByte(t, '.'); j >= 0 {
			if _, err := strconv.Atoi(strings.TrimRight(t[:j+1], ".")); err == nil {
				t = t[j+1:]
			}
		}
		if t == "" {
			continue
		}
		if len(g.Plies) == maxPlies {
			return g, fmt.Errorf("more than %d plies: the rest is not shown", maxPlies)
		}
		m, err := pos.ParseSAN(t)
		if err != nil {
			return g, fmt.Errorf("ply %d: move %s does not replay: %v", len(g.Plies)+1, apierr.Q(t), err)
		}
		san, uci := pos.SAN(m), pos.UCIMove(m)
		pos.MakeMove(m)
		g.Plies = append(g.Plies, pgnPly{N: len(g.Plies) + 1, Move: moveNo, White: white, SAN: san, UCI: uci, FEN: pos.FEN()})
		if !white {
			moveNo++
		}
		white = !white
	}
	if g.Result == "" {
		g.Result = g.Tag("Result")
	}
	return g, nil
}

func parseTagLine(l string) (name, value string, ok bool) {
	if !strings.HasPrefix(l, "[") || !strings.HasSuffix(l, "]") {
		return "", "", false
	}
	l = strings.TrimSpace(l[1 : len(l)-1])
	sp := strings.IndexByte(l, ' ')
	if sp <= 0 {
		return "", "", false
	}
	name, rest := l[:sp], strings.TrimSpace(l[sp+1:])
	if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
		return "", "", false
	}
	v := rest[1 : len(rest)-1]
	v = strings.ReplaceAll(strings.ReplaceAll(v, `\"`, `"`), `\\`, `\`)
	return name, v, true
}

type token struct {
	text    string
	comment bool
}

// tokenize splits movetext into moves, numbers, results and comments,
// dropping variations and ';' comments.
func tokenize(s string) []token {
	var out []token
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				j = len(s) - i
			}
			if depth == 0 {
				out = append(out, token{text: s[i+1 : min(i+j, len(s))], comment: true})
			}
			i += j + 1
		case c == ';':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case c == '(':
			depth++
			i++
		case c == ')':
			depth = max(depth-1, 0)
			i++
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
			i++
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \n\r\t{}();", rune(s[j])) {
				j++
			}
			if depth == 0 {
				out = append(out, token{text: s[i:j]})
			}
			i = j
		}
	}
	return out
}
