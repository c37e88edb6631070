package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/nodmix/nodmix/internal/jsondepth"
)

const (
	// maxCallStack bounds JS recursion; goja keeps frames on the heap, so this is cheap.
	maxCallStack = 10000
	// watchdogInterval is how often the child samples its heap and re-asserts a pending failure.
	watchdogInterval = 5 * time.Millisecond
	// codeSource names the user code in syntax errors and stacks.
	codeSource = "tool_search_code"
)

// lockdown runs once in every fresh runtime before the model's code. It removes the paths to
// code generation from strings — eval and every Function-family constructor, including the ones
// reachable only as (async) function / generator prototypes' constructor — by replacing them
// with one function that throws the reference's EvalError, and drops goja's non-standard GoError.
// The original constructors become unreachable, so nothing the code does can restore them.
const lockdown = `(function (g) {
  "use strict";
  const EvalErr = g.EvalError;
  const deny = function Function() { throw new EvalErr(` + "`" + msgCodeGeneration + "`" + `); };
  const hidden = { writable: false, enumerable: false, configurable: false };
  Object.defineProperty(deny, "prototype", { value: Function.prototype, writable: false });
  const protos = [
    Function.prototype,
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}),
  ];
  for (const p of protos) Object.defineProperty(p, "constructor", { value: deny, ...hidden });
  Object.defineProperty(g, "Function", { value: deny, ...hidden });
  Object.defineProperty(g, "eval", { value: deny, ...hidden });
  delete g.GoError;
})(globalThis);`

// failure is a run-ending condition raised outside the normal flow of the code: by a limit in a
// native function or by the watchdog goroutine.
type failure struct {
	kind, msg string
}

type pendingCall struct {
	resolve, reject func(any) error
}

// jsRuntime is one fresh goja runtime for exactly one run. All fields but fatal belong to the
// goroutine running the VM; fatal is shared with the watchdog.
type jsRuntime struct {
	vm                      *goja.Runtime
	stringify, parse, toStr goja.Callable
	newErrorObj             goja.Constructor

	lim     wireLimits
	out     *childOut
	pending map[string]pendingCall
	nextID  int
	calls   int
	seen    int

	logBytes      int
	logsTruncated bool

	fatalMu sync.Mutex
	fatal   *failure
}

// newJSRuntime builds and locks down a runtime. The originals of JSON, String and Error are
// captured first, so the code's tampering with globals cannot change how values leave the VM.
func newJSRuntime() (*jsRuntime, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	rt := &jsRuntime{vm: vm, pending: make(map[string]pendingCall)}

	jsonObj := vm.Get("JSON").ToObject(vm)
	var ok1, ok2, ok3, ok4 bool
	rt.stringify, ok1 = goja.AssertFunction(jsonObj.Get("stringify"))
	rt.parse, ok2 = goja.AssertFunction(jsonObj.Get("parse"))
	rt.toStr, ok3 = goja.AssertFunction(vm.Get("String"))
	rt.newErrorObj, ok4 = goja.AssertConstructor(vm.Get("Error"))
	freeze, ok5 := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("freeze"))
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return nil, errors.New("sandbox: goja runtime lacks a standard builtin")
	}
	if _, err := vm.RunString(lockdown); err != nil {
		return nil, fmt.Errorf("sandbox: lock down runtime: %w", err)
	}

	console := vm.NewObject()
	for _, name := range []string{"log", "warn", "error"} {
		if err := console.Set(name, rt.consoleLog); err != nil {
			return nil, fmt.Errorf("sandbox: install console.%s: %w", name, err)
		}
	}
	tools := vm.NewObject()
	for _, m := range []string{methodSearch, methodDescribe, methodCall} {
		if err := tools.Set(m, rt.bridgeFunc(m)); err != nil {
			return nil, fmt.Errorf("sandbox: install nodmix.tools.%s: %w", m, err)
		}
	}
	nodmix := vm.NewObject()
	if err := nodmix.Set("tools", tools); err != nil {
		return nil, fmt.Errorf("sandbox: install nodmix.tools: %w", err)
	}
	for _, o := range []*goja.Object{console, tools, nodmix} {
		if _, err := freeze(nil, o); err != nil {
			return nil, fmt.Errorf("sandbox: freeze bridge: %w", err)
		}
	}
	g := vm.GlobalObject()
	for name, v := range map[string]*goja.Object{"console": console, "nodmix": nodmix} {
		if err := g.DefineDataProperty(name, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return nil, fmt.Errorf("sandbox: install %s: %w", name, err)
		}
	}
	return rt, nil
}

// fail records the first run-ending failure and stops the VM at its next instruction. Safe to
// call from any goroutine.
func (rt *jsRuntime) fail(kind, msg string) {
	rt.fatalMu.Lock()
	if rt.fatal == nil {
		rt.fatal = &failure{kind: kind, msg: msg}
	}
	rt.fatalMu.Unlock()
	rt.vm.Interrupt(errors.New(msg))
}

func (rt *jsRuntime) failure() *failure {
	rt.fatalMu.Lock()
	defer rt.fatalMu.Unlock()
	return rt.fatal
}

// call invokes a captured builtin. Catchable exceptions come back as errors; uncatchable ones
// (interrupts, stack overflow) are re-raised so they keep unwinding the VM.
func (rt *jsRuntime) call(fn goja.Callable, args ...goja.Value) (goja.Value, error) {
	v, err := fn(goja.Undefined(), args...)
	if err != nil {
		var ie *goja.InterruptedError
		var se *goja.StackOverflowError
		if errors.As(err, &ie) || errors.As(err, &se) {
			panic(err)
		}
	}
	return v, err
}

// str is String(v) with the original String; a value whose conversion throws prints as such.
func (rt *jsRuntime) str(v goja.Value) string {
	s, err := rt.call(rt.toStr, v)
	if err != nil {
		return "[unprintable value]"
	}
	return s.String()
}

// jsonText is JSON.stringify(v) with the original JSON; ok is false when v has no JSON form.
func (rt *jsRuntime) jsonText(v goja.Value) (text string, ok bool, err error) {
	s, err := rt.call(rt.stringify, v)
	if err != nil {
		return "", false, err
	}
	if s == nil || goja.IsUndefined(s) {
		return "", false, nil
	}
	return s.String(), true, nil
}

func (rt *jsRuntime) newError(msg string) goja.Value {
	o, err := rt.newErrorObj(nil, rt.vm.ToValue(msg))
	if err != nil {
		return rt.vm.ToValue(msg)
	}
	return o
}

func (rt *jsRuntime) formatValue(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		return rt.str(v)
	}
	if _, isFn := goja.AssertFunction(obj); isFn {
		return "[Function]"
	}
	if obj.ClassName() == "Error" {
		return rt.str(v)
	}
	if s, ok, err := rt.jsonText(v); err == nil && ok {
		return s
	}
	return rt.str(v)
}

func (rt *jsRuntime) consoleLog(call goja.FunctionCall) goja.Value {
	if rt.logsTruncated {
		return goja.Undefined()
	}
	parts := make([]string, len(call.Arguments))
	for i, a := range call.Arguments {
		parts[i] = rt.formatValue(a)
	}
	line := strings.Join(parts, " ")
	room := rt.lim.MaxLogBytes - rt.logBytes
	if cost := len(line) + 1; cost <= room {
		rt.logBytes += cost
		rt.out.send(message{Type: msgLog, Line: line})
		return goja.Undefined()
	}
	rt.logsTruncated = true
	rt.logBytes = rt.lim.MaxLogBytes
	rt.out.send(message{Type: msgLog, Line: truncateUTF8(line, room-1), Truncated: true})
	return goja.Undefined()
}

func truncateUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// bridgeFunc returns nodmix.tools[method]. Every invocation counts against the call cap, even
// one with bad arguments, so a loop of failing calls cannot run unbounded either.
func (rt *jsRuntime) bridgeFunc(method string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		rt.calls++
		if rt.calls > rt.lim.MaxBridgeCalls {
			rt.fail(wireLimit, bridgeCapMessage(rt.lim.MaxBridgeCalls))
			return goja.Undefined()
		}
		promise, resolve, reject := rt.vm.NewPromise()
		args, rejection := rt.bridgeArgs(method, call)
		if rejection != nil {
			if err := reject(rejection); err != nil {
				panic(err)
			}
			return rt.vm.ToValue(promise)
		}
		rt.nextID++
		id := strconv.Itoa(rt.nextID)
		rt.pending[id] = pendingCall{resolve: resolve, reject: reject}
		rt.out.send(message{Type: msgBridge, ID: id, Method: method, Args: args})
		return rt.vm.ToValue(promise)
	}
}

// bridgeArgs validates a bridge call as the reference does and encodes its wire arguments; a
// non-nil rejection is the value the returned promise rejects with.
func (rt *jsRuntime) bridgeArgs(method string, call goja.FunctionCall) (json.RawMessage, goja.Value) {
	first := call.Argument(0)
	var v any
	switch method {
	case methodSearch:
		if !goja.IsString(first) {
			return nil, rt.newError(msgSearchQuery)
		}
		q := first.String()
		v = searchArgs{Query: &q, Limit: rt.searchLimit(call.Argument(1))}
	case methodDescribe:
		if !goja.IsString(first) {
			return nil, rt.newError(msgDescribeID)
		}
		id := first.String()
		v = describeArgs{ID: &id}
	case methodCall:
		if !goja.IsString(first) {
			return nil, rt.newError(msgCallID)
		}
		id := first.String()
		text, ok, err := rt.jsonText(call.Argument(1))
		if err != nil {
			var ex *goja.Exception
			if errors.As(err, &ex) {
				return nil, ex.Value()
			}
			return nil, rt.newError(err.Error())
		}
		if !ok {
			text = "null"
		}
		if jsondepth.DeeperString(text, MaxValueDepth) {
			return nil, rt.newError(bridgeArgsDepthMessage())
		}
		v = callArgs{ID: &id, Args: json.RawMessage(text)}
	default:
		return nil, rt.newError(msgUnsupported)
	}
	b, err := marshalLine(v)
	if err != nil {
		return nil, rt.newError(err.Error())
	}
	b = b[:len(b)-1]
	if len(b) > rt.lim.MaxResultBytes {
		return nil, rt.newError(bridgeArgsMessage(rt.lim.MaxResultBytes))
	}
	return b, nil
}

// searchLimit honours only a numeric options.limit, as the reference does; anything else means
// "the host's default" (0).
func (rt *jsRuntime) searchLimit(opts goja.Value) int {
	obj, ok := opts.(*goja.Object)
	if !ok {
		return 0
	}
	l := obj.Get("limit")
	if l == nil || !goja.IsNumber(l) {
		return 0
	}
	f := l.ToFloat()
	if f != f || f < 1 {
		return 0
	}
	return int(min(f, 1<<20))
}

// thrownMessage renders what the VM raised, as String(error) inside the VM would.
func (rt *jsRuntime) thrownMessage(err error) failure {
	if f := rt.failure(); f != nil {
		return *f
	}
	var ex *goja.Exception
	var se *goja.StackOverflowError
	var ie *goja.InterruptedError
	switch {
	case errors.As(err, &ex):
		return failure{wireThrown, rt.safeStr(ex.Value())}
	case errors.As(err, &se):
		return failure{wireThrown, msgStackOverflow}
	case errors.As(err, &ie):
		return failure{wireAborted, msgAborted}
	default:
		// Compile errors already read "SyntaxError: …".
		return failure{wireThrown, err.Error()}
	}
}

// safeStr is str for use outside any VM call, where an uncatchable error must not panic.
func (rt *jsRuntime) safeStr(v goja.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = "[unprintable value]"
		}
	}()
	return rt.str(v)
}

// settledResult turns the code's outcome into the result message; serializing the value may
// run the code's toJSON, so it is guarded like any VM entry.
func (rt *jsRuntime) settledResult(fulfilled bool, v goja.Value) (m message) {
	if !fulfilled {
		return failureMessage(failure{wireThrown, rt.safeStr(v)})
	}
	defer func() {
		if r := recover(); r != nil {
			if err, isErr := r.(error); isErr {
				m = failureMessage(rt.thrownMessage(err))
				return
			}
			panic(r)
		}
	}()
	text, ok, err := rt.jsonText(v)
	if err != nil {
		return failureMessage(rt.thrownMessage(err))
	}
	if !ok {
		text = "null"
	}
	if len(text) > rt.lim.MaxResultBytes {
		return failureMessage(failure{wireLimit, resultSizeMessage(rt.lim.MaxResultBytes)})
	}
	if jsondepth.DeeperString(text, MaxValueDepth) {
		return failureMessage(failure{wireLimit, resultDepthMessage()})
	}
	return message{Type: msgResult, OK: true, Value: json.RawMessage(text)}
}

func failureMessage(f failure) message {
	return message{Type: msgResult, Kind: f.kind, Error: f.msg}
}

// execute runs the code to completion: the body of an async function whose promise is pumped
// with bridge results read from in until it settles and no bridge call is outstanding (the
// reference's order). It returns the result message to send.
func (rt *jsRuntime) execute(code string, in *bufio.Reader) (m message) {
	defer func() {
		if r := recover(); r != nil {
			m = failureMessage(failure{wireInternal, fmt.Sprintf("tool_search_code internal error: %v", r)})
		}
	}()
	// The wrapper opens on the code's first line so that line numbers in errors match.
	prg, err := goja.Compile(codeSource, "(async function () {"+code+"\n})()", false)
	if err != nil {
		return failureMessage(rt.thrownMessage(err))
	}
	v, err := rt.vm.RunProgram(prg)
	if f := rt.failure(); f != nil {
		return failureMessage(*f)
	}
	if err != nil {
		return failureMessage(rt.thrownMessage(err))
	}
	promise, isPromise := v.Export().(*goja.Promise)
	var result message
	settled := false
	if !isPromise {
		// The code closed the wrapper itself; its completion value is the result.
		result, settled = rt.settledResult(true, v), true
	}
	for {
		if f := rt.failure(); f != nil {
			return failureMessage(*f)
		}
		if !settled && promise.State() != goja.PromiseStatePending {
			result = rt.settledResult(promise.State() == goja.PromiseStateFulfilled, promise.Result())
			settled = true
			continue
		}
		if len(rt.pending) == 0 {
			if settled {
				return result
			}
			// No timers, I/O or bridge calls exist that could still settle it.
			return failureMessage(failure{wireNeverSettled, msgNeverSettled})
		}
		rt.out.send(message{Type: msgWait, Seen: rt.seen})
		if err := rt.out.flush(); err != nil {
			return failureMessage(failure{wireAborted, msgAborted})
		}
		if f := rt.deliver(in); f != nil {
			return failureMessage(*f)
		}
	}
}

// deliver reads one bridge result and settles its promise, which runs the code's continuations.
func (rt *jsRuntime) deliver(in *bufio.Reader) *failure {
	line, err := readLine(in, maxChildLine)
	if err != nil {
		// The parent went away or broke the protocol; nobody will read a result.
		return &failure{wireAborted, msgAborted}
	}
	m, err := decodeMessage(line)
	if err != nil || m.Type != msgBridgeResult {
		return &failure{wireInternal, "tool_search_code internal error: unexpected message from host"}
	}
	pc, ok := rt.pending[m.ID]
	if !ok {
		return &failure{wireInternal, "tool_search_code internal error: unknown bridge call id"}
	}
	delete(rt.pending, m.ID)
	rt.seen++
	if m.OK {
		v, perr := rt.parse(goja.Undefined(), rt.vm.ToValue(string(m.Value)))
		if perr == nil {
			err = pc.resolve(v)
		} else {
			err = pc.reject(rt.newError(msgBridgeBadJSON))
		}
	} else {
		err = pc.reject(rt.newError(m.Error))
	}
	if err != nil {
		f := rt.thrownMessage(err)
		return &f
	}
	return nil
}

// watch samples the heap until stop closes. Over the limit it first forces a collection, so
// garbage alone never fails a run, then fails the run if the live heap is still too large. It
// also ends the run when ctx ends or the parent process is gone, and keeps interrupting once a
// failure is set, in case the interrupt landed while the VM was idle or inside a native call.
func (rt *jsRuntime) watch(ctx context.Context, limit int64, stop <-chan struct{}) {
	t := time.NewTicker(watchdogInterval)
	defer t.Stop()
	ppid := os.Getppid()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	done := ctx.Done()
	for {
		select {
		case <-stop:
			return
		case <-done:
			done = nil
			rt.fail(wireAborted, msgAborted)
		case <-t.C:
			if f := rt.failure(); f != nil {
				rt.vm.Interrupt(errors.New(f.msg))
				continue
			}
			metrics.Read(samples[:1])
			if heapBytes(samples[0]) > uint64(limit) {
				runtime.GC()
				metrics.Read(samples[1:])
				if heapBytes(samples[1]) > uint64(limit) {
					rt.fail(wireLimit, memoryMessage(limit))
				}
			}
			if os.Getppid() != ppid {
				rt.fail(wireAborted, msgAborted)
			}
		}
	}
}

func heapBytes(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
