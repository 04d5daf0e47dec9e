// Package verify is the VERIFY kind of job: distributed `arbiter verify
// --coordinator`. Every side of the kind the coordinator serves registers
// from this folder's init, through the registries the roles keep (one blank
// import in kinds/install puts it in a program): the workload
// (workload.Register), its gRPC service VerifyService with the admission
// rule of each method (workload.Servicer, service.go), and the sessions'
// stored reports (report.go).
//
// One engine query of a client's descent is one unit, leased (like every
// unit, by the core) only to a worker that advertised the unit's engine
// ("verify-engine:NAME"); a worker without it never sees the unit.
//
// Why in memory and not in the store: a verify unit is a pure function of
// its content (engine name, arguments, options, position, depth), and the
// client names it by a digest of that content, so the whole state of a
// verification is the client's descent. If the coordinator restarts, the
// client's long poll fails, it reconnects and asks again under the same
// names: each unit is created again, a worker that still holds a lease from
// before adopts it on its next heartbeat, and a result computed before the
// restart is accepted for the unit asked again. Nothing is counted twice
// because nothing is added up here: the client takes one answer per query.
//
// Invariants:
//   - A unit has at most one live lease; the first result that passes the
//     shape check is its result, later copies are compared (DUPLICATE or
//     MISMATCH), never taken.
//   - Sessions a client stops asking about are dropped after Idle, with
//     their units; sessions are capped in number and size.
package verify
