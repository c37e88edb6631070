package sandbox

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSecurity feeds the sandbox code that tries to get out of it or to exhaust it. Every
// snippet must fail with a clear error within its deadline (plus slack), and the pool must stay
// healthy: a normal run right after each one succeeds.
func TestSecurity(t *testing.T) {
	p := newTestPool(t, 2)
	const evalErr = "EvalError: " + msgCodeGeneration
	tests := []struct {
		name  string
		code  string
		lim   func(*Limits)
		kind  FailureKind
		want  string // exact message, or a regexp when it starts with "^"
		check func(t *testing.T, res *Result)
	}{
		// The file system, the network, the environment and processes: no API exists.
		{name: "read a file with require", code: `return require("fs").readFileSync("/etc/passwd", "utf8");`,
			kind: KindThrown, want: "ReferenceError: require is not defined"},
		{name: "read a file with Deno", code: `return await Deno.readTextFile("/etc/passwd");`,
			kind: KindThrown, want: "ReferenceError: Deno is not defined"},
		{name: "open a socket with fetch", code: `return await fetch("http://127.0.0.1:1/");`,
			kind: KindThrown, want: "ReferenceError: fetch is not defined"},
		{name: "open a socket with XMLHttpRequest", code: `return new XMLHttpRequest();`,
			kind: KindThrown, want: "ReferenceError: XMLHttpRequest is not defined"},
		{name: "open a WebSocket", code: `return new WebSocket("ws://127.0.0.1:1/");`,
			kind: KindThrown, want: "ReferenceError: WebSocket is not defined"},
		{name: "read the environment", code: `return process.env;`,
			kind: KindThrown, want: "ReferenceError: process is not defined"},
		{name: "spawn a process", code: `return require("child_process").execSync("id").toString();`,
			kind: KindThrown, want: "ReferenceError: require is not defined"},
		{name: "start a worker", code: `return new Worker("data:,1");`,
			kind: KindThrown, want: "ReferenceError: Worker is not defined"},
		{name: "dynamic import", code: `const fs = await import("fs"); return fs;`,
			kind: KindThrown, want: "^SyntaxError: "},
		{name: "static import", code: `import fs from "fs"; return 1;`,
			kind: KindThrown, want: "^SyntaxError: "},
		{name: "timers", code: `setTimeout("globalThis.x = 1", 0); return 1;`,
			kind: KindThrown, want: "ReferenceError: setTimeout is not defined"},

		// Code generation from strings, by every constructor route.
		{name: "eval", code: `return eval("1");`, kind: KindThrown, want: evalErr},
		{name: "indirect eval", code: `return (0, eval)("1");`, kind: KindThrown, want: evalErr},
		{name: "globalThis eval", code: `return globalThis["ev" + "al"]("1");`, kind: KindThrown, want: evalErr},
		{name: "Function", code: `return Function("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "new Function", code: `return new Function("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "function constructor", code: `return (function () {}).constructor("return this")();`, kind: KindThrown, want: evalErr},
		{name: "arrow constructor", code: `return (() => 1).constructor("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "async function constructor", code: `return await (async function () {}).constructor("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "generator constructor", code: `return (function* () {}).constructor("yield 1")().next().value;`, kind: KindThrown, want: evalErr},
		{name: "class constructor", code: `return (class {}).constructor("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "prototype chain", code: `return Object.getPrototypeOf(async () => {}).constructor("return 1");`, kind: KindThrown, want: evalErr},
		{name: "Reflect.construct", code: `return Reflect.construct(Function, ["return 1"])();`, kind: KindThrown, want: evalErr},
		{name: "constructor of a bridge function", code: `return nodmix.tools.search.constructor("return process")();`, kind: KindThrown, want: evalErr},
		{name: "constructor of console.log", code: `return console.log.constructor.constructor("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "array constructor chain", code: `return [].constructor.constructor("return 1")();`, kind: KindThrown, want: evalErr},
		{name: "restore Function.prototype.constructor", code: `delete Function.prototype.constructor;
Function.prototype.constructor = 1; return (function () {}).constructor("return 1")();`, kind: KindThrown, want: evalErr},

		// Exhaustion.
		{name: "loop forever", code: `while (true) {}`, kind: KindTimeout, want: msgTimedOut},
		{name: "loop forever catching everything", code: `for (;;) { try { while (true) {} } catch (e) {} finally { continue; } }`,
			kind: KindTimeout, want: msgTimedOut},
		{name: "loop forever in a continuation", code: `await null; for (;;) {}`, kind: KindTimeout, want: msgTimedOut},
		// Backtracking inside one native regexp call never reaches an interrupt check; the
		// parent's kill ends it all the same.
		{name: "catastrophic backtracking", code: `return /^(?=a)(a+)+$/.test("a".repeat(40) + "b");`,
			kind: KindTimeout, want: msgTimedOut},
		{name: "loop forever inside toString of a throw", code: `throw {toString() { for (;;) {} }};`, kind: KindTimeout, want: msgTimedOut},
		// String.prototype.repeat loops once per copy, which -race makes slow: build megabytes
		// from kilobytes so the snippets exhaust memory, not the deadline, in every build.
		{name: "allocate without bound", code: `const mb = "x".repeat(1024).repeat(1024);
let a = []; while (true) a.push(mb + a.length);`,
			lim: slowUnderRace, kind: KindLimit, want: memoryMessage(64 << 20)},
		{name: "allocate objects without bound", code: `let a = []; while (true) a.push({i: a.length, s: [1, 2, 3]});`,
			lim: slowUnderRace, kind: KindLimit, want: memoryMessage(64 << 20)},
		{name: "one huge allocation", code: `const s = "x".repeat(2 ** 13).repeat(2 ** 14); for (;;) {}`,
			lim: slowUnderRace, kind: KindLimit, want: memoryMessage(64 << 20)},
		{name: "recurse without bound", code: `function f() { return f() + 1; } return f();`,
			kind: KindThrown, want: msgStackOverflow},
		{name: "recurse without bound in native code", code: `const open = "[".repeat(1000).repeat(1000);
return JSON.parse(open + "]".repeat(1000).repeat(1000)).length;`,
			lim: slowUnderRace, kind: KindThrown, want: msgStackOverflow}, // growing the stack to its cap takes a while
		{name: "print without bound", code: `while (true) console.log("spam ".repeat(100));`,
			kind: KindTimeout, want: msgTimedOut, check: func(t *testing.T, res *Result) {
				n := 0
				for _, l := range res.Logs {
					n += len(l) + 1
				}
				if !res.LogsTruncated || n > DefaultMaxLogBytes || n < DefaultMaxLogBytes/2 {
					t.Errorf("logs: %d bytes, truncated %v; want close to the %d byte cap", n, res.LogsTruncated, DefaultMaxLogBytes)
				}
			}},
		{name: "never settle", code: `await new Promise(() => {});`, kind: KindNeverSettled, want: msgNeverSettled},
		{name: "never settle after a bridge call", code: `await nodmix.tools.search("x"); await new Promise(() => {});`,
			kind: KindNeverSettled, want: msgNeverSettled},
		{name: "exceed the bridge call cap", code: `for (let i = 0; i < 10; i++) await nodmix.tools.search("x"); return "escaped";`,
			lim: func(l *Limits) { l.MaxBridgeCalls = 5 }, kind: KindLimit, want: bridgeCapMessage(5)},
		{name: "exceed the bridge call cap catching errors", code: `for (let i = 0; i < 10; i++) {
  try { await nodmix.tools.search(1); } catch (e) {}
} return "escaped";`, lim: func(l *Limits) { l.MaxBridgeCalls = 5 }, kind: KindLimit, want: bridgeCapMessage(5)},
		{name: "exceed the bridge call cap without awaiting", code: `for (;;) nodmix.tools.describe("x");`,
			kind: KindLimit, want: bridgeCapMessage(DefaultMaxBridgeCalls)},
		{name: "result too large", code: `return "x".repeat(2e6);`, kind: KindLimit, want: resultSizeMessage(DefaultMaxResultBytes),
			lim: func(l *Limits) { l.Timeout = 20 * time.Second }}, // a loaded machine under -race took more than 2 s
		{name: "bridge arguments too large", code: `try { await nodmix.tools.call("x", "y".repeat(2e6)); } catch (e) { throw e; }`,
			kind: KindThrown, want: "Error: " + bridgeArgsMessage(DefaultMaxResultBytes),
			lim: func(l *Limits) { l.Timeout = 20 * time.Second }}, // megabytes under -race take seconds
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := testLimits()
			if tc.kind == KindTimeout {
				lim.Timeout = 500 * time.Millisecond
			}
			if tc.lim != nil {
				tc.lim(&lim)
			}
			start := time.Now()
			res, err := p.Run(context.Background(), tc.code, &fakeBridge{}, lim)
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("Run succeeded with %s, want failure", res.Value)
			}
			ce := codeError(t, err)
			if ce.Kind != tc.kind {
				t.Errorf("kind = %s, want %s (message %q)", ce.Kind, tc.kind, ce.Message)
			}
			if strings.HasPrefix(tc.want, "^") {
				if !regexp.MustCompile(tc.want).MatchString(ce.Message) {
					t.Errorf("message = %q, want match of %s", ce.Message, tc.want)
				}
			} else if ce.Message != tc.want {
				t.Errorf("message = %q, want %q", ce.Message, tc.want)
			}
			if elapsed > lim.Timeout+slack {
				t.Errorf("took %v, deadline %v", elapsed, lim.Timeout)
			}
			if res == nil {
				t.Fatal("no Result with the CodeError")
			}
			if tc.check != nil {
				tc.check(t, res)
			}
			if ok := mustRun(t, p, `return (await nodmix.tools.search("x")).length;`, &fakeBridge{}); string(ok.Value) != "1" {
				t.Errorf("healthy run after %q returned %s", tc.name, ok.Value)
			}
		})
	}
}

// TestNoStateLeaks: what one run does to its realm is invisible to the next, even when both
// runs land in children started the same way from the same pool.
func TestNoStateLeaks(t *testing.T) {
	p := newTestPool(t, 1)
	pollute := `Object.prototype.polluted = "yes"; Array.prototype.push = null; globalThis.leak = 1;
JSON.parse = () => "hacked"; Promise.prototype.then = null; return Object.keys({}).length + 1;`
	if res := mustRun(t, p, pollute, &fakeBridge{}); string(res.Value) != "1" {
		t.Fatalf("polluting run returned %s", res.Value)
	}
	res := mustRun(t, p, `return [typeof ({}).polluted, typeof [].push, typeof leak, typeof Promise.prototype.then,
(await nodmix.tools.search("x"))[0].name];`, &fakeBridge{})
	if diff := cmp.Diff(`["undefined","function","undefined","function","issue_create"]`, string(res.Value)); diff != "" {
		t.Errorf("next run saw the pollution (-want +got):\n%s", diff)
	}
}

// TestGlobalSurface pins the whole global object: the ECMAScript builtins goja provides, plus
// console and nodmix, and nothing else (no require, process, fetch, timers, Deno, GoError).
func TestGlobalSurface(t *testing.T) {
	p := newTestPool(t, -1)
	res := mustRun(t, p, `return Object.getOwnPropertyNames(globalThis);`, &fakeBridge{})
	var got []string
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{
		"AggregateError", "Array", "ArrayBuffer", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean",
		"DataView", "Date", "Error", "EvalError", "Float32Array", "Float64Array", "Function", "Infinity",
		"Int16Array", "Int32Array", "Int8Array", "JSON", "Map", "Math", "NaN", "Number", "Object", "Promise",
		"Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set", "String", "Symbol",
		"SyntaxError", "TypeError", "URIError", "Uint16Array", "Uint32Array", "Uint8Array",
		"Uint8ClampedArray", "WeakMap", "WeakSet", "console", "decodeURI", "decodeURIComponent",
		"encodeURI", "encodeURIComponent", "escape", "eval", "globalThis", "isFinite", "isNaN", "nodmix",
		"parseFloat", "parseInt", "undefined", "unescape",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("globals (-want +got):\n%s", diff)
	}
}

// slowUnderRace gives snippets that must hit a memory or stack limit time to get there: the race
// detector makes big copies and collections several times slower, and the machine is shared.
func slowUnderRace(l *Limits) { l.Timeout = 20 * time.Second }
