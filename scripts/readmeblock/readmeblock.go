// Package readmeblock rewrites a generated block of a Markdown file: the
// lines between "<!-- begin NAME ... -->" and "<!-- end NAME -->". The
// README's figures come from real runs of the benchmark tools that write
// them (make readme-figures), never typed by hand.
package readmeblock

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Replace returns doc with the body of block name replaced by body; the
// marker lines stay. The block must occur exactly once.
func Replace(doc []byte, name, body string) ([]byte, error) {
	begin := []byte("<!-- begin " + name + " ")
	end := []byte("<!-- end " + name + " -->")
	i := bytes.Index(doc, begin)
	if i < 0 || bytes.Count(doc, begin) != 1 {
		return nil, fmt.Errorf("readmeblock: want exactly one %q marker", begin)
	}
	nl := bytes.IndexByte(doc[i:], '\n')
	if nl < 0 {
		return nil, fmt.Errorf("readmeblock: %q marker at the end of the file", begin)
	}
	start := i + nl + 1
	j := bytes.Index(doc[start:], end)
	if j < 0 || bytes.Count(doc, end) != 1 {
		return nil, fmt.Errorf("readmeblock: want exactly one %q after its begin marker", end)
	}
	if body != "" && body[len(body)-1] != '\n' {
		body += "\n"
	}
	out := make([]byte, 0, len(doc)+len(body))
	out = append(out, doc[:start]...)
	out = append(out, body...)
	out = append(out, doc[start+j:]...)
	return out, nil
}

// ReplaceFile rewrites block name of the file at path.
func ReplaceFile(path, name, body string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := Replace(doc, name, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// Machine says where and when figures were measured: the date, the cores
// and the load average (Linux), so that a reader can judge them.
func Machine() string {
	s := fmt.Sprintf("measured %s on %d cores", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU())
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			s += ", load average " + f[0]
		}
	}
	return s
}
