package grpcapi

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/credentials"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

type adminService struct {
	arbiterv1.UnimplementedAdminServiceServer
	s     *Server
	core  *core.Core
	creds *credentials.Manager
	store *store.Store
}

func credentialProto(v credentials.View) *arbiterv1.Credential {
	c := &arbiterv1.Credential{Name: v.Name, Role: v.Role, CreatedAt: timestamppb.New(v.CreatedAt), CreatedBy: v.CreatedBy}
	if !v.RevokedAt.IsZero() {
		c.RevokedAt = timestamppb.New(v.RevokedAt)
	}
	return c
}

func (as *adminService) CreateCredential(ctx context.Context, req *arbiterv1.CreateCredentialRequest) (*arbiterv1.CreateCredentialResponse, error) {
	role, err := identity.ParseRole(req.GetRole())
	if err != nil {
		return nil, apierr.Invalid("%v", err)
	}
	tok, err := as.creds.Create(ctx, caller(ctx), req.GetName(), role)
	if err != nil {
		return nil, err
	}
	list, _ := as.creds.List(caller(ctx))
	resp := &arbiterv1.CreateCredentialResponse{Token: tok}
	for _, v := range list {
		if v.Name == req.GetName() {
			resp.Credential = credentialProto(v)
		}
	}
	return resp, nil
}

func (as *adminService) ListCredentials(ctx context.Context, _ *arbiterv1.ListCredentialsRequest) (*arbiterv1.ListCredentialsResponse, error) {
	list, err := as.creds.List(caller(ctx))
	if err != nil {
		return nil, err
	}
	resp := &arbiterv1.ListCredentialsResponse{}
	for _, v := range list {
		resp.Credentials = append(resp.Credentials, credentialProto(v))
	}
	return resp, nil
}

func (as *adminService) RevokeCredential(ctx context.Context, req *arbiterv1.RevokeCredentialRequest) (*arbiterv1.RevokeCredentialResponse, error) {
	if err := as.creds.Revoke(ctx, caller(ctx), req.GetName()); err != nil {
		return nil, err
	}
	return &arbiterv1.RevokeCredentialResponse{}, nil
}

func (as *adminService) ListWorkers(ctx context.Context, _ *arbiterv1.ListWorkersRequest) (*arbiterv1.ListWorkersResponse, error) {
	if err := mayRead(caller(ctx)); err != nil {
		return nil, err
	}
	resp := &arbiterv1.ListWorkersResponse{}
	for _, w := range as.core.Workers() {
		wi := &arbiterv1.WorkerInfo{WorkerId: w.ID, Name: w.Name, Owner: w.Owner, Capabilities: CapsProto(w.Caps),
			RegisteredAt: timestamppb.New(w.RegisteredAt), Units: w.Units}
		if !w.LastSeen.IsZero() {
			wi.LastSeen = timestamppb.New(w.LastSeen)
		}
		resp.Workers = append(resp.Workers, wi)
	}
	return resp, nil
}

// Backup writes an online copy of the store to a temporary file beside it
// and streams it.
func (as *adminService) Backup(_ *arbiterv1.BackupRequest, stream arbiterv1.AdminService_BackupServer) error {
	ctx := stream.Context()
	if !caller(ctx).IsAdmin() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "only an admin may take a backup")
	}
	if as.store == nil {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "no store")
	}
	if as.store.Backend() != store.SQLite {
		return apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "%v", store.ErrNoBackup)
	}
	dir, err := os.MkdirTemp(as.store.Dir(), "backup-")
	if err != nil {
		return apierr.Store(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, store.FileName)
	if err := as.store.Backup(ctx, path); err != nil {
		return apierr.Store(err)
	}
	f, err := os.Open(path)
	if err != nil {
		return apierr.Store(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if err := stream.Send(&arbiterv1.BackupResponse{Data: buf[:n]}); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return apierr.Store(err)
		}
	}
}

func blocksProto(bs []core.Block) []*arbiterv1.Block {
	out := make([]*arbiterv1.Block, 0, len(bs))
	for _, b := range bs {
		out = append(out, &arbiterv1.Block{WorkerId: b.WorkerID, Identity: b.Identity, Reason: b.Reason, By: b.By, At: timestamppb.New(b.At)})
	}
	return out
}

func (a *adminService) BlockWorker(ctx context.Context, req *arbiterv1.BlockWorkerRequest) (*arbiterv1.BlockWorkerResponse, error) {
	bs, err := a.core.SetBlock(ctx, caller(ctx), req.GetWorkerId(), req.GetIdentity(), req.GetBlocked(), req.GetReason())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.BlockWorkerResponse{Blocked: blocksProto(bs)}, nil
}

func (a *adminService) ListBlocked(ctx context.Context, req *arbiterv1.ListBlockedRequest) (*arbiterv1.ListBlockedResponse, error) {
	if err := mayRead(caller(ctx)); err != nil {
		return nil, err
	}
	return &arbiterv1.ListBlockedResponse{Blocked: blocksProto(a.core.Blocked())}, nil
}
