// Package srctree unpacks an uploaded engine source tree (a
// gzip-compressed tar) into a directory without ever writing outside it.
//
// A lexical check of entry names is not enough: a tree that first makes
// "a" a link to "." and "a/b" a link to ".." passes a check of each link
// against its own directory, and an entry "a/b/x" then lands beside the
// tree. So:
//   - every file, directory and link is made through an os.Root opened on
//     the directory: the standard library resolves each name component by
//     component with O_NOFOLLOW (openat on Unix, handles on Windows) and
//     refuses any that leaves the root, whatever links the tree holds;
//   - on top of that, nothing is written through a link at all: an entry
//     whose path goes through, or ends at, a link the tree made earlier is
//     refused (a source tree never needs it, and it is how chains are
//     built);
//   - after the last entry, every link the tree made is resolved inside
//     the root and refused when it points outside (directly or through a
//     chain of links), so the build and the engine do not find a path out
//     either. A link to a name the tree does not hold is kept (build
//     outputs are often linked before they exist).
//
// Every refusal names the entry and says why.
package srctree

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Unpack extracts the gzip-compressed tar r into dir, which must exist (and
// should be empty), refusing trees of more than maxBytes of file content.
// On error, what was written stays inside dir; the caller removes it.
func Unpack(r io.Reader, dir string, maxBytes int64) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzip-compressed tar: %w", err)
	}
	tr := tar.NewReader(gz)
	u := unpacker{root: root, links: map[string]string{}, maxBytes: maxBytes}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return u.checkLinks()
		}
		if err != nil {
			return err
		}
		if err := u.entry(h, tr); err != nil {
			return err
		}
	}
}

type unpacker struct {
	root     *os.Root
	links    map[string]string // the links made: name → target
	total    int64
	maxBytes int64
}

// clean returns an entry name as a slash-separated path inside the root,
// or an error when it is absolute or climbs out.
func clean(name string) (string, error) {
	if strings.ContainsRune(name, 0) || strings.Contains(name, `\`) {
		return "", fmt.Errorf("entry %q: a NUL or backslash in the name", name)
	}
	p := path.Clean(name)
	if path.IsAbs(name) || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("entry %q leaves the tree", name)
	}
	return p, nil
}

// throughLink refuses a path that goes through, or ends at, a link the
// tree made: nothing is written through a link.
func (u *unpacker) throughLink(entry, p string) error {
	for q := p; q != "." && q != "/"; q = path.Dir(q) {
		if _, ok := u.links[q]; ok {
			if q == p {
				return fmt.Errorf("entry %q: replaces the symbolic link made earlier (nothing is written through a link)", entry)
			}
			return fmt.Errorf("entry %q: goes through the symbolic link %q (nothing is written through a link)", entry, q)
		}
	}
	return nil
}

func (u *unpacker) entry(h *tar.Header, body io.Reader) error {
	switch h.Typeflag {
	case tar.TypeXGlobalHeader, tar.TypeXHeader:
		return nil // git archive's commit id: nothing to unpack
	}
	p, err := clean(h.Name)
	if err != nil {
		return err
	}
	if err := u.throughLink(h.Name, p); err != nil {
		return err
	}
	if p == "." {
		if h.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("entry %q: the tree's root is not a file", h.Name)
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return u.wrap(h.Name, u.root.MkdirAll(p, 0o755))
	case tar.TypeReg:
		if h.Size < 0 {
			return fmt.Errorf("entry %q: negative size", h.Name)
		}
		u.total += h.Size
		if u.total > u.maxBytes {
			return fmt.Errorf("the tree is over %d bytes unpacked", u.maxBytes)
		}
		if err := u.parent(h.Name, p); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		// Not a link this tree made (throughLink), and the directory is
		// the caller's fresh one: nothing else put a link there.
		out, err := u.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
		if err != nil {
			return u.wrap(h.Name, err)
		}
		_, err = io.CopyN(out, body, h.Size)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return u.wrap(h.Name, err)
	case tar.TypeSymlink:
		target := h.Linkname
		if target == "" || path.IsAbs(target) || strings.HasPrefix(target, `\`) || strings.ContainsRune(target, 0) {
			return fmt.Errorf("symbolic link %q → %q: an absolute or empty target", h.Name, target)
		}
		if l := path.Clean(path.Join(path.Dir(p), target)); l == ".." || strings.HasPrefix(l, "../") {
			return fmt.Errorf("symbolic link %q → %q points outside the tree", h.Name, target)
		}
		if err := u.parent(h.Name, p); err != nil {
			return err
		}
		if _, err := u.root.Lstat(p); err == nil {
			return fmt.Errorf("symbolic link %q: the name is taken by an earlier entry", h.Name)
		}
		if err := u.root.Symlink(target, p); err != nil {
			return u.wrap(h.Name, err)
		}
		u.links[p] = target
		return nil
	}
	return fmt.Errorf("entry %q: type %q is not a file, directory or symbolic link", h.Name, h.Typeflag)
}

// parent makes the directories above p.
func (u *unpacker) parent(entry, p string) error {
	if d := path.Dir(p); d != "." {
		return u.wrap(entry, u.root.MkdirAll(d, 0o755))
	}
	return nil
}

// checkLinks resolves every link the tree made, inside the root: one that
// leads outside, directly or through other links, refuses the tree.
func (u *unpacker) checkLinks() error {
	for p, target := range u.links {
		_, err := u.root.Stat(p)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return fmt.Errorf("symbolic link %q → %q does not resolve inside the tree: %v", p, target, unwrapPath(err))
	}
	return nil
}

func (u *unpacker) wrap(entry string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("entry %q: %v", entry, unwrapPath(err))
}

// unwrapPath drops a PathError's operation and (absolute) path: the
// message names the entry instead.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
