package engineproc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// source is a process's stdout as the line reader sees it.
type source interface {
	// read reads what is available into p, waiting until deadline at most
	// (the zero time: no limit). It returns (0, ErrTimeout) when nothing
	// arrived in time and (0, io.EOF) at the end of the output.
	read(p []byte, deadline time.Time) (int, error)
	// exited is called once the process has exited, before close.
	exited()
	// quiet asks that the next read take nothing before until: output
	// written meanwhile waits and is read at once then. A source may
	// ignore it; a dead engine or the read's deadline ends it early.
	quiet(until time.Time)
	close() error
}

// maxBuf is the largest the buffer grows: a line of maxLine bytes and room
// to read past it while the rest of an over-long line is dropped.
const maxBuf = maxLine + 16<<10

// lineReader splits a source into lines without allocating per line.
//
// Invariants:
//   - buf[r:w] is unread output; buf[r:scanned] holds no '\n' (it was
//     searched before, and is not searched again).
//   - skipping: the line at r passed maxLine with buf full; buf[r:r+maxLine]
//     is kept as its head and everything after it up to the next '\n' is
//     dropped as it arrives.
//   - A timeout changes none of this: the partial line stays for the next call.
type lineReader struct {
	src      source
	buf      []byte
	r, w     int
	scanned  int
	skipping bool
	end      error // set once the source has ended (ErrEOF, wrapped)
}

func (l *lineReader) readLine(deadline time.Time) ([]byte, error) {
	// Past the deadline nothing is read, even output that is waiting: an
	// engine that floods its output past its time must still time out.
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return nil, ErrTimeout
	}
	for {
		if i := bytes.IndexByte(l.buf[l.scanned:l.w], '\n'); i >= 0 {
			nl := l.scanned + i
			line := l.buf[l.r:nl]
			if l.skipping {
				line = l.buf[l.r : l.r+maxLine]
				l.skipping = false
			} else if len(line) > maxLine {
				line = line[:maxLine]
			}
			l.r, l.scanned = nl+1, nl+1
			return bytes.TrimRight(line, "\r"), nil
		}
		l.scanned = l.w
		if l.end != nil {
			if l.w > l.r {
				// The last line had no newline.
				line := l.buf[l.r:l.w]
				if len(line) > maxLine {
					line = line[:maxLine]
				}
				l.r, l.scanned, l.skipping = l.w, l.w, false
				return bytes.TrimRight(line, "\r"), nil
			}
			return nil, l.end
		}
		if l.skipping {
			l.w, l.scanned = l.r+maxLine, l.r+maxLine
		}
		if l.w == len(l.buf) {
			l.makeRoom()
		}
		n, err := l.src.read(l.buf[l.w:], deadline)
		if n > 0 && bytes.IndexByte(l.buf[l.w:l.w+n], 0) >= 0 {
			// NUL bytes are never protocol text: dropped, so that a line
			// with them still parses.
			n = dropNULs(l.buf[l.w : l.w+n])
		}
		l.w += n
		switch {
		case err == nil:
		case errors.Is(err, ErrTimeout):
			if n == 0 {
				return nil, ErrTimeout
			}
		case errors.Is(err, io.EOF):
			l.end = ErrEOF
		default:
			l.end = fmt.Errorf("%w: %v", ErrEOF, err)
		}
	}
}

// makeRoom frees space after w: slide the unread bytes to the front, else
// grow the buffer, else (a line longer than maxBuf) start skipping.
func (l *lineReader) makeRoom() {
	switch {
	case l.r > 0:
		n := copy(l.buf, l.buf[l.r:l.w])
		l.scanned -= l.r
		l.r, l.w = 0, n
	case len(l.buf) < maxBuf:
		// Rare (long PVs, garbage): this allocation does not matter.
		nb := make([]byte, min(2*len(l.buf), maxBuf))
		copy(nb, l.buf[:l.w])
		l.buf = nb
	default:
		l.skipping = true
		l.w, l.scanned = l.r+maxLine, l.r+maxLine
	}
}

// dropNULs removes the NUL bytes of b in place and returns the new length.
func dropNULs(b []byte) int {
	n := 0
	for _, c := range b {
		if c != 0 {
			b[n] = c
			n++
		}
	}
	return n
}
