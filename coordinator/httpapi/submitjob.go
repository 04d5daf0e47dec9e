package httpapi

// POST /api/v1/jobs {"kind": KIND, "spec": {...}}: one route for every
// registered kind with a spec (package workload). The spec is the kind's
// spec message in protobuf JSON, decoded into the message the kind
// registered and sent to JobService.SubmitJob with the caller's token, as
// `arbiter submit KIND` does; the gRPC server checks the kind, the role,
// the quota and the spec. Its admission rule is the route's one entry in
// the admission table (coordinator/admission/routes.go), whatever the kind.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// maxKindName bounds the kind a body names (kind names are short words).
const maxKindName = 64

// submitBody is the body of POST /api/v1/jobs.
type submitBody struct {
	Kind string          `json:"kind"`
	Spec json.RawMessage `json:"spec"`
}

// submitJob is POST /api/v1/jobs.
func (h *Handler) submitJob(w http.ResponseWriter, r *http.Request) {
	b, err := h.body(w, r)
	if err != nil {
		h.fail(w, err)
		return
	}
	var body submitBody
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		h.fail(w, apierr.Invalid(`body: not {"kind": KIND, "spec": {...}}: %v`, err))
		return
	}
	h.submitKind(w, r, body.Kind, body.Spec)
}

// submitKind decodes spec as kind's spec message and submits it: the
// route above, and the kinds' submit routes of the last release.
func (h *Handler) submitKind(w http.ResponseWriter, r *http.Request, kind string, spec json.RawMessage) {
	ctx, err := call(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if len(kind) > maxKindName {
		h.fail(w, apierr.Invalid("kind: %d bytes, longer than any kind (%d)", len(kind), maxKindName))
		return
	}
	k, ok := workload.Lookup(kind)
	if !ok || k.Spec == nil {
		h.fail(w, apierr.Invalid("kind: %s is not a kind of job submitted with a spec (%s)", apierr.Q(kind), strings.Join(submittable(), ", ")))
		return
	}
	if len(bytes.TrimSpace(spec)) == 0 {
		h.fail(w, apierr.Invalid("spec: missing (a %s job's spec in protobuf JSON)", kind))
		return
	}
	msg := k.Spec()
	if err := unmarshal.Unmarshal(spec, msg); err != nil {
		h.fail(w, apierr.Invalid("spec: not a %s job's spec (%s in protobuf JSON): %v", kind, msg.ProtoReflect().Descriptor().Name(), err))
		return
	}
	packed, err := anypb.New(msg)
	if err != nil {
		h.fail(w, err)
		return
	}
	resp, err := h.jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: kind, Spec: packed})
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, jobreport.NewJobJSON(resp.GetJob()))
}

// submittable names the registered kinds with a spec, sorted.
func submittable() []string {
	var out []string
	for _, k := range workload.Kinds() {
		if k.Spec != nil {
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// legacySubmit is a kind's submit route of the last release, POST
// /api/v1/KIND with the bare spec as its body: kept one release, a thin
// wrapper of POST /api/v1/jobs.
func (h *Handler) legacySubmit(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := h.body(w, r)
		if err != nil {
			h.fail(w, err)
			return
		}
		h.submitKind(w, r, kind, b)
	}
}
