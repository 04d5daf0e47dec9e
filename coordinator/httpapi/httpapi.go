// Package httpapi is the coordinator's JSON API over HTTP, under /api/v1
// on the web listener, for scripts and bots that do not speak gRPC.
//
// It is a translation, not a second API: every job call is made on the
// coordinator's own gRPC API in process (Coordinator.InProcess) with the
// caller's bearer token, so that authentication, roles, ownership,
// quotas and validation are the gRPC server's, and a job reads as
// `arbiter status --json` prints it (jobreport.JobJSON, docs/json). The
// webhooks' calls go to package hooks with the identity the token
// resolves to. openapi.json documents every route; a test calls each and
// checks every response against its schema.
//
// Invariant: every route is registered through the API door's admission
// (package admission): the bearer token, the route's role, the body's
// declared length and a reservation from the byte budget are checked
// from the headers before a byte of the body is read; the body is then
// read within the route's limit (the admission table).
package httpapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/grpcerr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Prefix is where the API is served.
const Prefix = "/api/v1"

//go:embed openapi.json
var openAPI []byte

// OpenAPI is the API's OpenAPI 3.1 document.
func OpenAPI() []byte { return openAPI }

// Resolver turns a bearer token into an identity (credentials.Manager).
type Resolver interface {
	Resolve(token string) (identity.Identity, bool)
}

// Config is what the API needs.
type Config struct {
	// API is the coordinator's gRPC API in process.
	API    grpc.ClientConnInterface
	Tokens Resolver
	Hooks  *hooks.Manager
	Logger *zap.Logger
	// Admission admits every request before its body is read (the
	// coordinator's; nil: a default one of the API's own).
	Admission *admission.Admission
}

// Handler serves the API.
type Handler struct {
	cfg  Config
	jobs arbiterv1.JobServiceClient
	data arbiterv1.DatagenServiceClient
	mux  *http.ServeMux
	door *admission.HTTPDoor
}

// New makes the API's handler (mount it at Prefix + "/").
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Admission == nil {
		adm, err := admission.New(admission.Config{}, nil)
		if err != nil {
			panic(err) // the default configuration is valid
		}
		cfg.Admission = adm
	}
	h := &Handler{cfg: cfg, jobs: arbiterv1.NewJobServiceClient(cfg.API), data: arbiterv1.NewDatagenServiceClient(cfg.API), mux: http.NewServeMux()}
	h.door = &admission.HTTPDoor{Door: admission.API, A: cfg.Admission, Identify: h.identify,
		Refuse: func(w http.ResponseWriter, r *http.Request, err error) { h.fail(w, err) }}
	h.handle("GET "+Prefix+"/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	h.handle("GET "+Prefix+"/jobs", h.listJobs)
	h.handle("GET "+Prefix+"/jobs/{id}", h.getJob)
	h.handle("GET "+Prefix+"/jobs/{id}/block", h.getBlock)
	h.handle("GET "+Prefix+"/jobs/{id}/pgn", h.getPGN)
	h.handle("GET "+Prefix+"/jobs/{id}/shards", h.getShards)
	h.handle("POST "+Prefix+"/jobs/{id}/cancel", h.cancel)
	h.handle("POST "+Prefix+"/jobs/{id}/modify", h.modify)
	h.handle("POST "+Prefix+"/jobs", h.submitJob)
	// Until the next release: the datagen kind's route of the last one.
	h.handle("POST "+Prefix+"/datagen", h.legacySubmit("datagen"))
	h.handle("POST "+Prefix+"/tests", h.submitTest)
	h.handle("POST "+Prefix+"/tunes", h.submitTune)
	h.handle("POST "+Prefix+"/perft", h.submitPerft)
	h.handle("GET "+Prefix+"/hooks", h.listHooks)
	h.handle("POST "+Prefix+"/hooks", h.addHook)
	h.handle("DELETE "+Prefix+"/hooks/{id}", h.removeHook)
	h.handle("GET "+Prefix+"/hooks/{id}/deliveries", h.hookDeliveries)
	h.handle("GET "+Prefix+"/deliveries", h.hookDeliveries)
	h.handle(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("%s %s: no such API route (%s/openapi.json lists them)", r.Method, r.URL.Path, Prefix))
	})
	return h
}

// handle serves pattern behind the API door's admission.
func (h *Handler) handle(pattern string, fn http.HandlerFunc) { h.door.HandleFunc(h.mux, pattern, fn) }

// Door is the API door's admission, for the tests that walk its routes.
func (h *Handler) Door() *admission.HTTPDoor { return h.door }

// identify resolves the bearer token from the headers (anonymous when
// there is none or it is unknown).
func (h *Handler) identify(r *http.Request) (identity.Identity, bool) {
	tok := token(r)
	if tok == "" || len(tok) > maxTokenBytes {
		return identity.Identity{}, false
	}
	return h.cfg.Tokens.Resolve(tok)
}

// maxTokenBytes bounds a bearer token worth looking up.
const maxTokenBytes = 256

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// Error is every error's body.
type Error struct {
	Error string `json:"error"`
	// Code is the gRPC code's name (INVALID_ARGUMENT, PERMISSION_DENIED,
	// ...); Reason the coordinator's reason when it gave one.
	Code   string `json:"code"`
	Reason string `json:"reason,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, name, msg string) {
	writeJSON(w, code, Error{Error: msg, Code: name})
}

// httpStatus maps a gRPC code to its HTTP status.
var httpStatus = map[codes.Code]int{
	codes.InvalidArgument: http.StatusBadRequest, codes.OutOfRange: http.StatusBadRequest,
	codes.Unauthenticated: http.StatusUnauthorized, codes.PermissionDenied: http.StatusForbidden,
	codes.NotFound: http.StatusNotFound, codes.AlreadyExists: http.StatusConflict,
	codes.FailedPrecondition: http.StatusConflict, codes.Aborted: http.StatusConflict,
	codes.ResourceExhausted: http.StatusTooManyRequests, codes.Unavailable: http.StatusServiceUnavailable,
	codes.DeadlineExceeded: http.StatusGatewayTimeout, codes.Unimplemented: http.StatusNotImplemented,
}

// fail writes err (a gRPC status or an apierr.Error) as an Error.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	err = grpcerr.To(err) // an apierr.Error as the gRPC server would send it
	code, msg, reason := grpcerr.Code(err), grpcerr.Message(err), grpcerr.Reason(err)
	hs, ok := httpStatus[code]
	if reason == apierr.ReasonTooLarge {
		hs = http.StatusRequestEntityTooLarge
	}
	if !ok {
		hs = http.StatusInternalServerError
		h.cfg.Logger.Warn("api call failed", zap.Error(err))
	}
	writeJSON(w, hs, Error{Error: msg, Code: strings.ToUpper(strings.ReplaceAll(camelToSnake(code.String()), " ", "_")), Reason: reason})
}

// camelToSnake writes a gRPC code name (InvalidArgument) as its
// canonical upper-case form's words (Invalid_Argument).
func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// token is the request's bearer token ("" when none).
func token(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(tok)
}

// call is the context of a gRPC call made for r, with r's token.
func call(r *http.Request) (context.Context, error) {
	tok := token(r)
	if tok == "" {
		return nil, status.Error(codes.Unauthenticated, "missing bearer token (Authorization: Bearer TOKEN)")
	}
	return metadata.AppendToOutgoingContext(r.Context(), "authorization", "Bearer "+tok), nil
}

// caller is the identity r's token resolves to.
func (h *Handler) caller(r *http.Request) (identity.Identity, error) {
	tok := token(r)
	if tok == "" {
		return identity.Identity{}, status.Error(codes.Unauthenticated, "missing bearer token (Authorization: Bearer TOKEN)")
	}
	id, ok := h.cfg.Tokens.Resolve(tok)
	if !ok {
		return identity.Identity{}, status.Error(codes.Unauthenticated, "unknown or revoked credential")
	}
	return id, nil
}

func (h *Handler) listJobs(w http.ResponseWriter, r *http.Request) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	limit := uint64(100)
	if s := r.URL.Query().Get("limit"); s != "" {
		if limit, err = strconv.ParseUint(s, 10, 32); err != nil || limit == 0 || limit > 10000 {
			h.fail(w, apierr.Invalid("limit %s: a number from 1 to 10000", apierr.Q(s)))
			return
		}
	}
	resp, err := h.jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: uint32(limit)})
	if err != nil {
		h.fail(w, err)
		return
	}
	jobs := resp.GetJobs()
	if kind := r.URL.Query().Get("kind"); kind != "" {
		var keep []*arbiterv1.Job
		for _, j := range jobs {
			if j.GetKind() == kind {
				keep = append(keep, j)
			}
		}
		jobs = keep
	}
	w.Header().Set("Content-Type", "application/json")
	jobreport.WriteJobs(w, jobs)
}

func (h *Handler) job(w http.ResponseWriter, r *http.Request) (*arbiterv1.Job, bool) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return nil, false
	}
	resp, err := h.jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: r.PathValue("id")})
	if err != nil {
		h.fail(w, err)
		return nil, false
	}
	return resp.GetJob(), true
}

func (h *Handler) getJob(w http.ResponseWriter, r *http.Request) {
	if j, ok := h.job(w, r); ok {
		writeJSON(w, http.StatusOK, jobreport.NewJobJSON(j))
	}
}

func (h *Handler) getBlock(w http.ResponseWriter, r *http.Request) {
	style, err := jobreport.ParseBlockStyle(r.URL.Query().Get("style"))
	if err != nil {
		h.fail(w, apierr.Invalid("%v", err))
		return
	}
	j, ok := h.job(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, jobreport.Block(j, style, r.URL.Query().Get("link")))
}

func (h *Handler) getPGN(w http.ResponseWriter, r *http.Request) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	stream, err := h.jobs.DownloadPGN(ctx, &arbiterv1.DownloadPGNRequest{JobId: r.PathValue("id")})
	if err != nil {
		h.fail(w, err)
		return
	}
	relay(h, w, stream, "application/x-chess-pgn", func(m *arbiterv1.DownloadPGNResponse) {
		io.WriteString(w, m.GetPgn())
	})
}

// getShards streams a dataset's shards from ?from= as JSON lines, one
// DownloadShardsResponse (protobuf JSON: data in base64) each.
func (h *Handler) getShards(w http.ResponseWriter, r *http.Request) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	var from uint64
	if s := r.URL.Query().Get("from"); s != "" {
		if from, err = strconv.ParseUint(s, 10, 64); err != nil {
			h.fail(w, apierr.Invalid("from %s: a shard index", apierr.Q(s)))
			return
		}
	}
	stream, err := h.data.DownloadShards(ctx, &arbiterv1.DownloadShardsRequest{JobId: r.PathValue("id"), From: from})
	if err != nil {
		h.fail(w, err)
		return
	}
	relay(h, w, stream, "application/x-ndjson", func(m *arbiterv1.DownloadShardsResponse) {
		b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		w.Write(append(b, '\n'))
	})
}

// relay answers with a server stream's messages, each written by write.
// An error before the first message is the answer's status; after it the
// status line is sent, so a broken stream ends the body short.
func relay[M any](h *Handler, w http.ResponseWriter, stream interface{ Recv() (M, error) }, contentType string, write func(M)) {
	m, err := stream.Recv()
	if err != nil && !errors.Is(err, io.EOF) {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	for ; err == nil; m, err = stream.Recv() {
		write(m)
	}
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	resp, err := h.jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: r.PathValue("id")})
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, jobreport.NewJobJSON(resp.GetJob()))
}

// modify changes a test as `arbiter modify` does: the body is a
// ModifyJobRequest in protobuf JSON whose job is the path's.
func (h *Handler) modify(w http.ResponseWriter, r *http.Request) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	b, err := h.body(w, r)
	if err != nil {
		h.fail(w, err)
		return
	}
	var req arbiterv1.ModifyJobRequest
	if err := unmarshal.Unmarshal(b, &req); err != nil {
		h.fail(w, apierr.Invalid("body: not a change (ModifyJobRequest in protobuf JSON: priority, throughput, games, notes, setTags, tags): %v", err))
		return
	}
	id := r.PathValue("id")
	if req.GetJobId() != "" && req.GetJobId() != id {
		h.fail(w, apierr.Invalid("body: jobId %s is not the path's job %s", apierr.Q(req.GetJobId()), apierr.Q(id)))
		return
	}
	req.JobId = id
	resp, err := h.jobs.ModifyJob(ctx, &req)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, jobreport.NewJobJSON(resp.GetJob()))
}

// body reads the request's body, which admission already bounds to the
// route's limit (http.MaxBytesReader).
func (h *Handler) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge, "request body: over the route's limit of %d bytes", mbe.Limit)
		}
		return nil, apierr.Invalid("request body: %v", err)
	}
	return b, nil
}

var unmarshal = protojson.UnmarshalOptions{DiscardUnknown: false}

func (h *Handler) submitTest(w http.ResponseWriter, r *http.Request) {
	submit(h, w, r, "a test's spec (MatchSpec in protobuf JSON)", func(ctx context.Context, spec *arbiterv1.MatchSpec) (*arbiterv1.Job, error) {
		resp, err := h.jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: spec})
		return resp.GetJob(), err
	})
}

func (h *Handler) submitTune(w http.ResponseWriter, r *http.Request) {
	submit(h, w, r, "a tune's spec (SpsaSpec in protobuf JSON)", func(ctx context.Context, spec *arbiterv1.SpsaSpec) (*arbiterv1.Job, error) {
		resp, err := h.jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: spec})
		return resp.GetJob(), err
	})
}

func (h *Handler) submitPerft(w http.ResponseWriter, r *http.Request) {
	submit(h, w, r, "a perft job's spec (PerftSpec in protobuf JSON)", func(ctx context.Context, spec *arbiterv1.PerftSpec) (*arbiterv1.Job, error) {
		resp, err := h.jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: spec})
		return resp.GetJob(), err
	})
}

// submit reads a spec of type S from the body (protobuf JSON, unknown
// fields refused), sends it with the caller's token and answers 201 with
// the new job as status --json shows it.
func submit[S any, PS interface {
	*S
	proto.Message
}](h *Handler, w http.ResponseWriter, r *http.Request, what string, send func(context.Context, PS) (*arbiterv1.Job, error)) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	b, err := h.body(w, r)
	if err != nil {
		h.fail(w, err)
		return
	}
	spec := PS(new(S))
	if err := unmarshal.Unmarshal(b, spec); err != nil {
		h.fail(w, apierr.Invalid("body: not %s: %v", what, err))
		return
	}
	job, err := send(ctx, spec)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, jobreport.NewJobJSON(job))
}

// HookJSON is a webhook as the API shows it; Secret only in the answer
// to the request that made it.
type HookJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Format    string   `json:"format"`
	Owner     string   `json:"owner"`
	Scope     string   `json:"scope"`
	CreatedAt string   `json:"created_at"`
	Secret    string   `json:"secret,omitempty"`
}

func hookJSON(h store.Hook) HookJSON {
	return HookJSON{ID: h.ID, URL: h.URL, Events: strings.Split(h.Events, ","), Format: h.Format, Owner: h.Owner, Scope: h.Scope,
		CreatedAt: h.CreatedAt.UTC().Format(time.RFC3339Nano), Secret: h.Secret}
}

// DeliveryJSON is one delivery of an event to a hook.
type DeliveryJSON struct {
	ID          string `json:"id"`
	Hook        string `json:"hook"`
	Job         string `json:"job"`
	Event       string `json:"event"`
	State       string `json:"state"`
	Attempts    int    `json:"attempts"`
	LastStatus  int    `json:"last_status"`
	LastError   string `json:"last_error,omitempty"`
	CreatedAt   string `json:"created_at"`
	NextAt      string `json:"next_at,omitempty"`
	DeliveredAt string `json:"delivered_at,omitempty"`
}

// NewDeliveryJSON renders a delivery.
func NewDeliveryJSON(d *store.Delivery) DeliveryJSON {
	o := DeliveryJSON{ID: d.ID, Hook: d.HookID, Job: d.JobID, Event: d.Event, State: d.State, Attempts: d.Attempts,
		LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt.UTC().Format(time.RFC3339Nano)}
	if d.State == "pending" && !d.NextAt.IsZero() {
		o.NextAt = d.NextAt.UTC().Format(time.RFC3339Nano)
	}
	if !d.DeliveredAt.IsZero() {
		o.DeliveredAt = d.DeliveredAt.UTC().Format(time.RFC3339Nano)
	}
	return o
}

func (h *Handler) hooksReady(w http.ResponseWriter) bool {
	if h.cfg.Hooks == nil {
		writeError(w, http.StatusNotImplemented, "UNIMPLEMENTED", "this coordinator sends no webhooks")
		return false
	}
	return true
}

func (h *Handler) listHooks(w http.ResponseWriter, r *http.Request) {
	id, err := h.caller(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if !h.hooksReady(w) {
		return
	}
	list, err := h.cfg.Hooks.List(id)
	if err != nil {
		h.fail(w, err)
		return
	}
	out := struct {
		Hooks []HookJSON `json:"hooks"`
	}{Hooks: []HookJSON{}}
	for _, x := range list {
		out.Hooks = append(out.Hooks, hookJSON(x))
	}
	writeJSON(w, http.StatusOK, out)
}

// HookRequest is the body that makes a hook.
type HookRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Format string   `json:"format,omitempty"`
	// Farm: every job's events, not only the caller's (admins).
	Farm bool `json:"farm,omitempty"`
	// Followed: the events of the jobs the caller follows on the web
	// pages, not of the caller's own jobs.
	Followed bool `json:"followed,omitempty"`
}

func (h *Handler) addHook(w http.ResponseWriter, r *http.Request) {
	id, err := h.caller(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if !h.hooksReady(w) {
		return
	}
	b, err := h.body(w, r)
	if err != nil {
		h.fail(w, err)
		return
	}
	var req HookRequest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		h.fail(w, apierr.Invalid("body: want {\"url\": ..., \"events\": [...], \"format\": ..., \"farm\": false, \"followed\": false}: %v", err))
		return
	}
	scope := hooks.ScopeOwn
	switch {
	case req.Farm && req.Followed:
		h.fail(w, apierr.Invalid("body: farm and followed: a hook has one scope"))
		return
	case req.Farm:
		scope = hooks.ScopeFarm
	case req.Followed:
		scope = hooks.ScopeFollowed
	}
	hook, err := h.cfg.Hooks.Add(r.Context(), id, req.URL, req.Events, req.Format, scope)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, hookJSON(*hook))
}

func (h *Handler) removeHook(w http.ResponseWriter, r *http.Request) {
	id, err := h.caller(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if !h.hooksReady(w) {
		return
	}
	if err := h.cfg.Hooks.Remove(r.Context(), id, r.PathValue("id")); err != nil {
		h.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) hookDeliveries(w http.ResponseWriter, r *http.Request) {
	id, err := h.caller(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if !h.hooksReady(w) {
		return
	}
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > 1000 {
			h.fail(w, apierr.Invalid("limit %s: a number from 1 to 1000", apierr.Q(s)))
			return
		}
	}
	list, err := h.cfg.Hooks.Deliveries(r.Context(), id, r.PathValue("id"), limit)
	if err != nil {
		h.fail(w, err)
		return
	}
	out := struct {
		Deliveries []DeliveryJSON `json:"deliveries"`
	}{Deliveries: []DeliveryJSON{}}
	for _, d := range list {
		out.Deliveries = append(out.Deliveries, NewDeliveryJSON(d))
	}
	writeJSON(w, http.StatusOK, out)
}

// ForCoordinator is the API of coordinator c on its in-process gRPC API
// (localcluster.ServerConfig.API); nil, logged, when that cannot be made.
func ForCoordinator(c *coordinator.Coordinator, log *zap.Logger) http.Handler {
	conn, err := c.InProcess()
	if err != nil {
		log.Error("JSON API not served", zap.Error(err))
		return nil
	}
	return New(Config{API: conn, Tokens: c.Credentials, Hooks: c.Hooks, Logger: log, Admission: c.Admission})
}
