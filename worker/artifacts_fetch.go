package worker

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/filehash"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// fetch returns the path of the artifact's verified bytes, downloading
// (or resuming a download) when the cache has none.
func (c *artifactCache) fetch(ctx context.Context, sha string, size uint64) (string, bool, error) {
	obj := filepath.Join(c.dir, "objects", sha)
	if _, err := os.Stat(obj); err == nil {
		return obj, true, nil
	}
	part := filepath.Join(c.dir, "partial", sha)
	refuse := func(format string, args ...any) error {
		return &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, detail: fmt.Sprintf(format, args...)}
	}
	c.trimFor(int64(size))
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return "", false, ctx.Err()
			case <-time.After(time.Duration(attempt) * time.Second):
			}
		}
		err := c.download(ctx, sha, part, int64(size))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		lastErr = err
		c.log.Warn("artifact download broke; resuming", zap.String("sha256", sha[:12]), zap.Error(err))
		if attempt == 4 {
			return "", false, refuse("artifact %s: download failed: %v", sha[:12], lastErr)
		}
	}
	got, err := filehash.SHA256(part)
	if err != nil {
		return "", false, refuse("artifact %s: %v", sha[:12], err)
	}
	if got != sha {
		os.Remove(part)
		return "", false, refuse("artifact %s: the downloaded bytes have SHA-256 %s: hash mismatch, discarded", sha[:12], got[:12])
	}
	if err := os.Rename(part, obj); err != nil {
		return "", false, refuse("artifact %s: %v", sha[:12], err)
	}
	c.log.Info("artifact downloaded", zap.String("sha256", sha[:12]), zap.Uint64("bytes", size))
	return obj, false, nil
}

// download appends the artifact's bytes to part from its current length.
func (c *artifactCache) download(ctx context.Context, sha, part string, size int64) error {
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	have := st.Size()
	if size > 0 && have > size {
		if err := f.Truncate(0); err != nil {
			return err
		}
		have = 0
	}
	if size > 0 && have == size {
		return nil
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return err
	}
	if have > 0 {
		c.log.Info("artifact download resumed", zap.String("sha256", sha[:12]), zap.Int64("offset", have))
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.client.Download(dctx, &arbiterv1.DownloadRequest{Sha256: sha, Offset: uint64(have)})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if msg.GetSize() > 0 && have+int64(len(msg.GetData())) > int64(msg.GetSize()) {
			return fmt.Errorf("the coordinator sent more than %d bytes", msg.GetSize())
		}
		if _, err := f.Write(msg.GetData()); err != nil {
			return err
		}
		have += int64(len(msg.GetData()))
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if size > 0 && have != size {
		return fmt.Errorf("download ended at %d of %d bytes", have, size)
	}
	return nil
}
