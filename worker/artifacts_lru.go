package worker

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"
)

func touch(path string) {
	now := time.Now()
	os.Chtimes(path, now, now)
}

// trimFor makes room for n more bytes.
func (c *artifactCache) trimFor(n int64) { c.trimTo(c.maxBytes - n) }

// trim keeps the cache under its size.
func (c *artifactCache) trim() { c.trimTo(c.maxBytes) }

// trimTo removes the least recently used entries (downloads and builds)
// not in use until the cache holds at most limit bytes.
func (c *artifactCache) trimTo(limit int64) {
	type entry struct {
		path string
		size int64
		at   time.Time
	}
	var entries []entry
	var total int64
	for _, sub := range []string{"objects", "builds"} {
		list, _ := os.ReadDir(filepath.Join(c.dir, sub))
		for _, d := range list {
			if strings.Contains(d.Name(), ".tmp-") {
				continue
			}
			p := filepath.Join(c.dir, sub, d.Name())
			info, err := os.Stat(p)
			if err != nil {
				continue
			}
			size := info.Size()
			if info.IsDir() {
				size = dirSize(p)
			}
			entries = append(entries, entry{p, size, info.ModTime()})
			total += size
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].at.Before(entries[j].at) })
	for _, e := range entries {
		if total <= limit {
			return
		}
		if c.pinned[e.path] > 0 {
			continue
		}
		os.RemoveAll(e.path)
		total -= e.size
		c.m.evictions.Inc()
		c.log.Info("artifact cache entry evicted", zap.String("path", e.path), zap.Int64("bytes", e.size))
		for k := range c.verified {
			if strings.Contains(k, e.path) || strings.HasPrefix(k, filepath.Base(e.path)) {
				delete(c.verified, k)
			}
		}
	}
}
