// Package sandbox runs the model's Tool Search code (tool_search_code) in a locked-down goja
// runtime inside a short-lived child process of nodmix, bridging nodmix.tools calls to the host.
//
// # Isolation
//
// The code runs as the body of an async function in a fresh goja runtime whose only non-standard
// globals are console.{log,warn,error} and a frozen nodmix.tools.{search,describe,call}. goja has
// no file, network, process or timer API and none is registered; eval and every Function-family
// constructor throw the reference's EvalError. The runtime lives in a child process started
// from the nodmix binary itself ([ChildArg]) with an environment that holds nothing but its
// own settings (no variable of nodmix's) and an empty working directory, and each child serves
// exactly one run, so no state can reach a later run. On Linux a child gets SIGKILL when nodmix
// dies, even by SIGKILL, so a run cannot outlive it. The [Pool] keeps a few children started
// and idle so a run does not wait for a process start.
//
// # Limits
//
// The parent owns the wall clock: on expiry it SIGKILLs the child, which also ends native calls
// (a regexp backtracking, one huge copy) that no interrupt reaches. Unlike the reference's, the
// clock stops while the child sits idle waiting on the host's bridge calls (approvals, slow
// tools); the caller's context still bounds the whole run. Memory is bounded in layers: the
// child's Go memory limit, a heap watchdog that interrupts the code when the live heap stays over
// Limits.MemoryBytes, on Linux an address-space cap that makes a single giant allocation crash
// the child, and a parent-side resident-size backstop. Console output, the result and bridge
// arguments are capped in bytes, bridge calls in number; the result and bridge arguments may nest
// at most [MaxValueDepth] levels. The text of a thrown error is bounded like a result
// (Limits.MaxResultBytes) and ends with a note of how much is shown. The run's limits apply from
// its first message on. A failure of the sandbox itself (not of the code) reaches the model as
// one fixed "tool_search_code internal error" message; its detail goes to nodmix's log.
//
// # Differences from the reference
//
// A promise that can no longer settle — pending, with no bridge call outstanding, in a runtime
// without timers or I/O — fails at once with "tool_search_code promise never settled" instead
// of running into the deadline. Bridge functions return real promises that issue their call
// immediately, not lazy thenables. A JS stack overflow cannot be caught in goja; it ends the
// run with "RangeError: Maximum call stack size exceeded".
package sandbox
