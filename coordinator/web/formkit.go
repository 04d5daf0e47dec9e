package web

// The kit of the kinds' submit forms (formsections.go): what a form reads
// of the coordinator and the request beyond its own fields. FormRequest
// is given to a form's Fill on GET /submit and by ActionRequest.Form to
// its route: the coordinator's opening books (Books, LoadBook, with an
// uploaded book), the repositories tests used (KnownRepositories,
// KnownRepository, for the test form's shortcut), and the engines' inputs
// of a form (EngineFields; EngineSpec reads one with the CLI's parser,
// StoreUploads stores its uploaded files, ImportEngines fetches its git
// source, PreviewDiff shows the diff between two refs: formsources.go,
// formuploads.go). Nothing here creates a job: the route does, through
// ActionRequest.Core, which checks the caller again.

import (
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/match"
)

// FormRequest is one request of a kind's form (the GET of the submit
// page or the form's POST).
type FormRequest struct {
	R  *http.Request
	s  *Server
	vw viewer
}

// Form is the kit of the form this request sent.
func (a *ActionRequest) Form() *FormRequest { return &FormRequest{R: a.R, s: a.s, vw: a.vw} }

// Books lists the coordinator's opening books (--web-books: .epd, .pgn
// and .zip files), by name.
func (f *FormRequest) Books() []string { return f.s.books() }

// KnownRepositories are the repositories past tests came from (at most
// 50), for the shortcut; none without git fetches.
func (f *FormRequest) KnownRepositories() []string { return f.s.knownRepositories() }

// DiffPreview is the diff PreviewDiff builds, which a form's template
// shows with the layout's "diff".
type DiffPreview = diffView

// maxBookBytes bounds an uploaded book.
const maxBookBytes = 8 << 20

// LoadBook reads the book the form uploaded in its field book_file or,
// without one, the coordinator's book named book (one of Books), in file
// order, PGN books cut after plies (0: all), with its name. An error
// names the file and what is wrong with it.
func (f *FormRequest) LoadBook(book string, plies int) (*match.Book, string, error) {
	s, r := f.s, f.R
	var upload *multipart.FileHeader
	if r.MultipartForm != nil {
		if fs := r.MultipartForm.File["book_file"]; len(fs) > 0 && fs[0].Size > 0 {
			upload = fs[0]
		}
	}
	if upload != nil {
		name := filepath.Base(upload.Filename)
		ext := strings.ToLower(filepath.Ext(name))
		if ext != ".epd" && ext != ".pgn" && ext != ".zip" && ext != ".fen" {
			return nil, "", bad("book file %s: want an .epd, .pgn or .zip file", clipQ(name))
		}
		if upload.Size > maxBookBytes {
			return nil, "", bad("book file %s: %d bytes, at most %d", clipQ(name), upload.Size, maxBookBytes)
		}
		in, err := upload.Open()
		if err != nil {
			return nil, "", bad("book file %s: %v", clipQ(name), err)
		}
		defer in.Close()
		tmp, err := os.CreateTemp("", "arbiter-book-*"+ext)
		if err != nil {
			return nil, "", err
		}
		defer os.Remove(tmp.Name())
		_, err = io.Copy(tmp, io.LimitReader(in, maxBookBytes))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, "", err
		}
		book, err := match.LoadBook(match.BookOptions{Path: tmp.Name(), Order: "sequential", Plies: plies})
		if err != nil {
			return nil, "", bad("book file %s: %s", clipQ(name), strings.ReplaceAll(err.Error(), tmp.Name(), name))
		}
		return book, name, nil
	}
	if book == "" {
		return nil, "", bad("opening book: choose one or upload a file")
	}
	known := false
	for _, b := range s.books() {
		known = known || b == book
	}
	if !known {
		return nil, "", bad("opening book %s: not one of the coordinator's books", clipQ(book))
	}
	loaded, err := match.LoadBook(match.BookOptions{Path: filepath.Join(s.cfg.BooksDir, book), Order: "sequential", Plies: plies})
	if err != nil {
		return nil, "", bad("opening book %s: %v", clipQ(book), err)
	}
	return loaded, book, nil
}

// ParseShare reads a submit form's priority and throughput share fields
// (empty: 0, the defaults), within the core's bounds, or an error naming
// the field and its value.
func ParseShare(priority, throughput string) (int32, float64, error) {
	prio, err := parseInt("priority", priority, core.MinPriority, core.MaxPriority)
	if err != nil {
		return 0, 0, err
	}
	share, err := parseFloat("throughput", throughput, 0, core.MaxShare)
	if err != nil {
		return 0, 0, err
	}
	return int32(prio), share, nil
}
