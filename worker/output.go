package worker

// The output of a build or of an uploaded engine's bench is someone else's
// program talking: the worker streams it through a fixed amount of memory
// (its last part is kept for the refusal's message, its lines are looked
// at one by one) and stops the program when it has said too much.

import (
	"fmt"
	"sync"
)

// Caps of a program's output.
const (
	// outputKeep is how much of the end of the output is kept.
	outputKeep = 64 << 10
	// outputLine bounds a line handed to onLine; the rest of a longer
	// line is dropped.
	outputLine = 4 << 10
	// maxBenchOutput and maxBuildOutput are the most a bench or a build
	// may print before it is stopped (a real bench prints a few KB, a
	// build with many warnings a few MB).
	maxBenchOutput = 16 << 20
	maxBuildOutput = 128 << 20
)

// outputTail is the writer a build's or bench's stdout and stderr go to.
type outputTail struct {
	limit  int64             // past it, over is called once
	over   func()            // stops the program
	onLine func(line string) // nil: lines are not looked at

	mu       sync.Mutex
	buf      []byte // the end of the output: at most 2*outputKeep
	total    int64
	line     []byte
	skipping bool // the current line passed outputLine
}

func newOutputTail(limit int64, over func(), onLine func(string)) *outputTail {
	return &outputTail{limit: limit, over: over, onLine: onLine}
}

func (o *outputTail) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	before := o.total
	o.total += int64(len(p))
	if before <= o.limit && o.total > o.limit && o.over != nil {
		o.over()
	}
	o.buf = append(o.buf, p...)
	if len(o.buf) > 2*outputKeep {
		o.buf = append(o.buf[:0], o.buf[len(o.buf)-outputKeep:]...)
	}
	if o.onLine != nil {
		for _, c := range p {
			if c == '\n' {
				if !o.skipping {
					o.onLine(string(o.line))
				}
				o.line, o.skipping = o.line[:0], false
				continue
			}
			if len(o.line) == outputLine {
				o.skipping = true
				continue
			}
			o.line = append(o.line, c)
		}
	}
	return len(p), nil
}

// flush hands a last line without a newline to onLine.
func (o *outputTail) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.onLine != nil && len(o.line) > 0 && !o.skipping {
		o.onLine(string(o.line))
	}
	o.line = o.line[:0]
}

// String is the end of the output, said to be cut when it was.
func (o *outputTail) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.buf
	if len(s) > outputKeep {
		s = s[len(s)-outputKeep:]
	}
	if o.total > int64(len(s)) {
		return fmt.Sprintf("[… %d bytes before]\n%s", o.total-int64(len(s)), s)
	}
	return string(s)
}

// overLimit reports whether the program printed more than its limit.
func (o *outputTail) overLimit() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total > o.limit
}
