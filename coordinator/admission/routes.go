package admission

import (
	"fmt"
	"slices"
	"sync"

	"github.com/arbiter-chess/arbiter/base/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Role is who may call a route.
type Role int

const (
	// Anyone: no credential needed (sign-in, sign-up, reading pages).
	Anyone Role = iota + 1
	// Worker: identity.CanWork.
	Worker
	// Client: identity.CanSubmit.
	Client
	// Admin: identity.IsAdmin.
	Admin
)

// Allows reports whether id (signed: it is a real identity, not
// anonymous) may call a route of role r.
func (r Role) Allows(id identity.Identity, signed bool) bool {
	switch r {
	case Anyone:
		return true
	case Worker:
		return signed && id.CanWork()
	case Client:
		return signed && id.CanSubmit()
	case Admin:
		return signed && id.IsAdmin()
	}
	return false
}

func (r Role) String() string {
	return map[Role]string{Anyone: "anyone", Worker: "worker", Client: "client", Admin: "admin"}[r]
}

// RoleOf is the route role of a credential role (plugged-in kinds
// declare theirs as identity roles).
func RoleOf(r identity.Role) (Role, error) {
	switch r {
	case identity.Worker:
		return Worker, nil
	case identity.Client:
		return Client, nil
	case identity.Admin:
		return Admin, nil
	}
	return 0, fmt.Errorf("role %q: want worker, client or admin", r)
}

// Door is where a request comes in.
type Door string

// The doors.
const (
	GRPC Door = "grpc" // routes are full method names
	API  Door = "api"  // routes are "METHOD /api/v1/pattern", as the mux has them
	Web  Door = "web"  // routes are "POST /pattern" (pages read no body: see Table.Rule)
)

// Rule is what a route admits: the role and the largest body.
type Rule struct {
	Role     Role
	MaxBytes int64
}

// Route is a door's route.
type Route struct {
	Door Door
	Name string
}

// Body limits. A gRPC message of the largest kind is a game-pair batch
// result with its PGNs, or a test with its opening book inline; an upload
// chunk is 1 MiB (artifacts.ChunkBytes) with room; a heartbeat carries up
// to core.MaxHeldLeases lease ids, a verify report 64 positions of up to
// 64 KiB each; the API's JSON of the largest spec is larger than its
// protobuf; a web form may carry an opening book; an anonymous form
// (sign-in, sign-up) holds a name and two passwords.
const (
	MaxGRPCMessageBytes       = 16 << 20
	SmallMessageBytes         = 256 << 10
	MediumMessageBytes        = 1 << 20
	UploadMessageBytes        = 1<<20 + 64<<10
	VerifyReportBytes         = 5 << 20
	APISpecBytes              = 32 << 20
	APISmallBytes             = 64 << 10
	FormBytes                 = 16 << 20
	SmallFormBytes            = 64 << 10
	AnonymousFormBytes        = 8 << 10
	LargestRoute              = APISpecBytes
	noBody              int64 = 0
)

// builtin is the one table of every route the coordinator itself serves.
// Plugged-in kinds add theirs (Table.Add, from workload.Method); a door
// refuses to serve a route that is in neither (HTTPDoor.Handle panics at
// start, the gRPC tap answers Unimplemented), and TestEveryRouteHasARule
// walks the doors for routes missing here.
var builtin = map[Route]Rule{
	{GRPC, arbiterv1.WorkerService_Register_FullMethodName}:  {Worker, SmallMessageBytes},
	{GRPC, arbiterv1.WorkerService_Lease_FullMethodName}:     {Worker, SmallMessageBytes},
	{GRPC, arbiterv1.WorkerService_Heartbeat_FullMethodName}: {Worker, MediumMessageBytes},
	{GRPC, arbiterv1.WorkerService_Submit_FullMethodName}:    {Worker, MaxGRPCMessageBytes},
	{GRPC, arbiterv1.WorkerService_Release_FullMethodName}:   {Worker, SmallMessageBytes},

	{GRPC, arbiterv1.JobService_SubmitPerft_FullMethodName}:   {Client, MediumMessageBytes},
	{GRPC, arbiterv1.JobService_SubmitMatch_FullMethodName}:   {Client, MaxGRPCMessageBytes},
	{GRPC, arbiterv1.JobService_SubmitSpsa_FullMethodName}:    {Client, MaxGRPCMessageBytes},
	{GRPC, arbiterv1.JobService_SubmitJob_FullMethodName}:     {Client, MaxGRPCMessageBytes},
	{GRPC, arbiterv1.JobService_GetJob_FullMethodName}:        {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_ListJobs_FullMethodName}:      {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_WatchJob_FullMethodName}:      {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_CancelJob_FullMethodName}:     {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_DownloadPGN_FullMethodName}:   {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_ModifyJob_FullMethodName}:     {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_ResumeJob_FullMethodName}:     {Client, SmallMessageBytes},
	{GRPC, arbiterv1.JobService_RescheduleJob_FullMethodName}: {Client, SmallMessageBytes},

	{GRPC, arbiterv1.AdminService_CreateCredential_FullMethodName}: {Admin, SmallMessageBytes},
	{GRPC, arbiterv1.AdminService_ListCredentials_FullMethodName}:  {Admin, SmallMessageBytes},
	{GRPC, arbiterv1.AdminService_RevokeCredential_FullMethodName}: {Admin, SmallMessageBytes},
	{GRPC, arbiterv1.AdminService_ListWorkers_FullMethodName}:      {Client, SmallMessageBytes},
	{GRPC, arbiterv1.AdminService_Backup_FullMethodName}:           {Admin, SmallMessageBytes},
	{GRPC, arbiterv1.AdminService_BlockWorker_FullMethodName}:      {Admin, SmallMessageBytes},
	{GRPC, arbiterv1.AdminService_ListBlocked_FullMethodName}:      {Client, SmallMessageBytes},

	{GRPC, arbiterv1.ArtifactService_BeginUpload_FullMethodName}:    {Client, SmallMessageBytes},
	{GRPC, arbiterv1.ArtifactService_Upload_FullMethodName}:         {Client, UploadMessageBytes},
	{GRPC, arbiterv1.ArtifactService_GetArtifact_FullMethodName}:    {Client, SmallMessageBytes},
	{GRPC, arbiterv1.ArtifactService_ListArtifacts_FullMethodName}:  {Client, SmallMessageBytes},
	{GRPC, arbiterv1.ArtifactService_DeleteArtifact_FullMethodName}: {Client, SmallMessageBytes},
	{GRPC, arbiterv1.ArtifactService_Download_FullMethodName}:       {Worker, SmallMessageBytes},
	{GRPC, arbiterv1.ArtifactService_ReportArtifact_FullMethodName}: {Worker, SmallMessageBytes},
	{GRPC, arbiterv1.ArtifactService_SetDefaultNet_FullMethodName}:  {Client, SmallMessageBytes},

	// The JSON API: every route, reads included (they need a credential).
	{API, "GET /api/v1/openapi.json"}:          {Anyone, noBody},
	{API, "GET /api/v1/jobs"}:                  {Client, noBody},
	{API, "GET /api/v1/jobs/{id}"}:             {Client, noBody},
	{API, "GET /api/v1/jobs/{id}/block"}:       {Client, noBody},
	{API, "GET /api/v1/jobs/{id}/pgn"}:         {Client, noBody},
	{API, "GET /api/v1/jobs/{id}/shards"}:      {Client, noBody},
	{API, "POST /api/v1/jobs/{id}/cancel"}:     {Client, APISmallBytes},
	{API, "POST /api/v1/jobs/{id}/modify"}:     {Client, APISmallBytes},
	{API, "POST /api/v1/jobs"}:                 {Client, APISpecBytes}, // every kind: one rule for the route
	{API, "POST /api/v1/datagen"}:              {Client, APISpecBytes}, // until the next release: POST /api/v1/jobs's wrapper
	{API, "POST /api/v1/tests"}:                {Client, APISpecBytes},
	{API, "POST /api/v1/tunes"}:                {Client, APISpecBytes},
	{API, "POST /api/v1/perft"}:                {Client, APISmallBytes},
	{API, "GET /api/v1/hooks"}:                 {Client, noBody},
	{API, "POST /api/v1/hooks"}:                {Client, APISmallBytes},
	{API, "DELETE /api/v1/hooks/{id}"}:         {Client, noBody},
	{API, "GET /api/v1/hooks/{id}/deliveries"}: {Client, noBody},
	{API, "GET /api/v1/deliveries"}:            {Client, noBody},
	{API, "/api/v1/"}:                          {Anyone, noBody}, // the 404 of unknown routes

	// The web forms. Sign-in, sign-up and sign-out are open to anyone
	// (their handlers say what is missing) with a small body; the rest
	// need a signed-in client or admin (the handlers and the core check
	// approver and admin rights with the object).
	{Web, "/"}:                                  {Anyone, noBody}, // the 404 page of unknown paths
	{Web, "POST /signin"}:                       {Anyone, AnonymousFormBytes},
	{Web, "POST /signup"}:                       {Anyone, AnonymousFormBytes},
	{Web, "POST /signout"}:                      {Anyone, AnonymousFormBytes},
	{Web, "POST /submit/test"}:                  {Client, FormBytes},
	{Web, "POST /submit/preview"}:               {Client, FormBytes}, // the test form as typed: shows the diff, creates nothing
	{Web, "POST /submit/perft"}:                 {Client, SmallFormBytes},
	{Web, "POST /jobs/{id}/cancel"}:             {Client, SmallFormBytes},
	{Web, "POST /jobs/{id}/priority"}:           {Client, SmallFormBytes},
	{Web, "POST /tests/{id}/modify"}:            {Client, SmallFormBytes},
	{Web, "POST /workers/block"}:                {Client, SmallFormBytes},
	{Web, "POST /tests/{id}/resume"}:            {Client, SmallFormBytes},
	{Web, "POST /tests/{id}/reschedule"}:        {Client, SmallFormBytes},
	{Web, "POST /account/password"}:             {Client, SmallFormBytes},
	{Web, "POST /account/tokens"}:               {Client, SmallFormBytes},
	{Web, "POST /account/tokens/{name}/revoke"}: {Client, SmallFormBytes},
	{Web, "POST /users/{name}"}:                 {Admin, SmallFormBytes},
	{Web, "POST /jobs/{id}/approve"}:            {Client, SmallFormBytes},
	{Web, "POST /jobs/{id}/refuse"}:             {Client, SmallFormBytes},
	{Web, "POST /jobs/{id}/follow"}:             {Client, SmallFormBytes},
	{Web, "POST /jobs/{id}/unfollow"}:           {Client, SmallFormBytes},
}

// Table is the route table: the built-in routes and those plugged-in
// kinds add before the doors serve.
type Table struct {
	mu    sync.RWMutex
	rules map[Route]Rule
}

// NewTable is a table of the built-in routes.
func NewTable() *Table {
	t := &Table{rules: make(map[Route]Rule, len(builtin))}
	for r, rule := range builtin {
		t.rules[r] = rule
	}
	return t
}

// Add gives a plugged-in route its rule; a rule already there (a
// built-in route, or the same route twice) is not replaced.
func (t *Table) Add(r Route, rule Rule) error {
	if rule.MaxBytes < 0 || r.Door == GRPC && rule.MaxBytes > MaxGRPCMessageBytes {
		return fmt.Errorf("route %s %s: limit %d bytes outside 0..%d", r.Door, r.Name, rule.MaxBytes, MaxGRPCMessageBytes)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.rules[r]; ok && old != rule {
		return fmt.Errorf("route %s %s has a rule already", r.Door, r.Name)
	}
	t.rules[r] = rule
	return nil
}

// Rule is route's rule. A page of the web door (a GET or HEAD) reads no
// body and is anyone's: the page checks its reader itself.
func (t *Table) Rule(door Door, name string) (Rule, bool) {
	t.mu.RLock()
	rule, ok := t.rules[Route{door, name}]
	t.mu.RUnlock()
	if !ok && door == Web && (hasMethod(name, "GET") || hasMethod(name, "HEAD")) {
		return Rule{Anyone, noBody}, true
	}
	return rule, ok
}

// Routes lists door's routes in the table, sorted.
func (t *Table) Routes(door Door) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for r := range t.rules {
		if r.Door == door {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

func hasMethod(pattern, method string) bool {
	return len(pattern) > len(method) && pattern[:len(method)] == method && pattern[len(method)] == ' '
}
