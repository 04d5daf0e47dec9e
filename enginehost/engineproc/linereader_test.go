package engineproc

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeSource hands out chunks; a "" chunk is a timeout.
type fakeSource struct{ chunks []string }

func (f *fakeSource) read(p []byte, _ time.Time) (int, error) {
	if len(f.chunks) == 0 {
		return 0, io.EOF
	}
	c := f.chunks[0]
	if c == "" {
		f.chunks = f.chunks[1:]
		return 0, ErrTimeout
	}
	n := copy(p, c)
	if n == len(c) {
		f.chunks = f.chunks[1:]
	} else {
		f.chunks[0] = c[n:]
	}
	return n, nil
}

func (f *fakeSource) close() error    { return nil }
func (f *fakeSource) exited()         {}
func (f *fakeSource) quiet(time.Time) {}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("y", 3*maxBuf)
	for _, c := range []struct {
		name   string
		chunks []string
		want   []string // "TIMEOUT" for ErrTimeout
	}{
		{"lines in one chunk", []string{"a\nbb\nccc\n"}, []string{"a", "bb", "ccc"}},
		{"split lines", []string{"a", "b\nc", "", "d\n"}, []string{"ab", "TIMEOUT", "cd"}},
		{"CRLF and blanks", []string{"x\r\n\r\n\ny\r\n"}, []string{"x", "", "", "y"}},
		{"last line without newline", []string{"a\nlast"}, []string{"a", "last"}},
		{"over-long line", []string{"a\n", long, "\nb\n"}, []string{"a", strings.Repeat("y", maxLine), "b"}},
		{"over-long final line", []string{long}, []string{strings.Repeat("y", maxLine)}},
		{"long line in small chunks", chunk(strings.Repeat("z", maxLine+5)+"\nq\n", 1000), []string{strings.Repeat("z", maxLine), "q"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := lineReader{src: &fakeSource{chunks: c.chunks}, buf: make([]byte, 16)}
			for i, want := range c.want {
				line, err := l.readLine(time.Time{})
				got := string(line)
				if errors.Is(err, ErrTimeout) {
					got = "TIMEOUT"
				} else if err != nil {
					t.Fatalf("line %d: %v", i, err)
				}
				if got != want {
					t.Fatalf("line %d = %.40q (len %d), want %.40q (len %d)", i, got, len(got), want, len(want))
				}
			}
			if _, err := l.readLine(time.Time{}); !errors.Is(err, ErrEOF) {
				t.Fatalf("after the last line: %v, want ErrEOF", err)
			}
		})
	}
}

func chunk(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
