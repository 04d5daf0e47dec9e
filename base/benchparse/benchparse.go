// Package benchparse reads an engine's bench output the way the testing
// frameworks read it, with their own regular expressions and string
// handling, transcribed from their sources, so that tests can show that
// `arbiter bench` and the UCI `bench` command are read by each of them:
//
//   - OpenBench's current client (Client/bench.py, parse_stream_output);
//   - OpenBench's older client (Client/OpenBench.py, parseStreamOutput),
//     still run by many farms;
//   - Fishtest's worker (worker/games.py, run_single_bench).
package benchparse

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9 ]+`)
	firstInt = regexp.MustCompile(`\d+`)

	// Client/bench.py: "Multiple methods, including Ethereal and Stockfish".
	obNPS   = regexp.MustCompile(`(?i)(\d+\s+nps)|(nps\s+\d+)|(nodes second\s+\d+)`)
	obBench = regexp.MustCompile(`(?i)(\d+\s+nodes)|(nodes\s+\d+)|(nodes searched\s+\d+)`)

	// Client/OpenBench.py, on the upper-cased line.
	oldBench1 = regexp.MustCompile(`[0-9]+ NODES`)
	oldBench2 = regexp.MustCompile(`NODES[ ]+[0-9]+`)
	oldSpeed1 = regexp.MustCompile(`[0-9]+ NPS`)
	oldSpeed2 = regexp.MustCompile(`NPS[ ]+[0-9]+`)
)

// lines is Python's output.decode('ascii').strip().split('\n'); ok is
// false where decode('ascii') raises.
func lines(out string) ([]string, bool) {
	for i := 0; i < len(out); i++ {
		if out[i] >= 0x80 {
			return nil, false
		}
	}
	return strings.Split(strings.TrimSpace(out), "\n"), true
}

func intOf(match string) (int64, bool) {
	n, err := strconv.ParseInt(firstInt.FindString(match), 10, 64)
	return n, err == nil
}

// OpenBench is the current client's parse: lines from the last, every
// non-alphanumeric turned into a blank, the first match from the end of
// each pattern kept.
func OpenBench(out string) (nodes, nps int64, ok bool) {
	ls, ok := lines(out)
	if !ok {
		return 0, 0, false
	}
	var benchM, npsM string
	for i := len(ls) - 1; i >= 0; i-- {
		line := nonAlnum.ReplaceAllString(ls[i], " ")
		if m := obNPS.FindString(line); m != "" && npsM == "" {
			npsM = m
		}
		if m := obBench.FindString(line); m != "" && benchM == "" {
			benchM = m
		}
	}
	if benchM == "" || npsM == "" {
		return 0, 0, false
	}
	nodes, ok1 := intOf(benchM)
	nps, ok2 := intOf(npsM)
	return nodes, nps, ok1 && ok2
}

// OpenBenchOld is the older client's parse: lines from the last, up to the
// first line (from the end) in which none of its four patterns matches.
func OpenBenchOld(out string) (nodes, nps int64, ok bool) {
	ls, ok := lines(out)
	if !ok {
		return 0, 0, false
	}
	var benchM, speedM string
	for i := len(ls) - 1; i >= 0; i-- {
		line := strings.ToUpper(nonAlnum.ReplaceAllString(ls[i], " "))
		b1, b2 := oldBench1.FindString(line), oldBench2.FindString(line)
		s1, s2 := oldSpeed1.FindString(line), oldSpeed2.FindString(line)
		if b1 == "" && b2 == "" && s1 == "" && s2 == "" {
			break
		}
		if benchM == "" && (b1 != "" || b2 != "") {
			benchM = b1
			if benchM == "" {
				benchM = b2
			}
		}
		if speedM == "" && (s1 != "" || s2 != "") {
			speedM = s1
			if speedM == "" {
				speedM = s2
			}
		}
	}
	if benchM == "" || speedM == "" {
		return 0, 0, false
	}
	nodes, ok1 := intOf(benchM)
	nps, ok2 := intOf(speedM)
	return nodes, nps, ok1 && ok2
}

// Fishtest is the worker's parse of `engine bench ...`: in every line
// containing "Total time (ms)" or "Nodes searched", the text after the
// first ": " as a float.
func Fishtest(out string) (nodes int64, ms float64, ok bool) {
	var haveNodes, haveTime bool
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "Total time (ms)") {
			f, err := afterColon(line)
			if err != nil {
				return 0, 0, false // Python raises
			}
			ms, haveTime = f, true
		}
		if strings.Contains(line, "Nodes searched") {
			f, err := afterColon(line)
			if err != nil {
				return 0, 0, false
			}
			nodes, haveNodes = int64(f), true
		}
	}
	return nodes, ms, haveNodes && haveTime
}

// afterColon is float(line.split(": ")[1].strip()).
func afterColon(line string) (float64, error) {
	parts := strings.Split(line, ": ")
	if len(parts) < 2 {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
}
