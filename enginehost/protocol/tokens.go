package protocol

import "math"

// Small allocation-free readers of protocol tokens.

// HasWord reports whether line (after leading blanks) starts with word
// followed by a blank or the end of the line.
func HasWord(line []byte, word string) bool {
	for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		line = line[1:]
	}
	if len(line) < len(word) || string(line[:len(word)]) != word {
		return false
	}
	return len(line) == len(word) || line[len(word)] == ' ' || line[len(word)] == '\t'
}

// NextField returns the first blank-separated field of s and the rest.
func NextField(s []byte) (field, rest []byte) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	return s[i:j], s[j:]
}

// atoi parses a decimal integer that fits an int64; ok is false for
// anything else.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
