// Package thinktag separates the reasoning that local models write into their answer text as
// <think>…</think> from the text a person sees, for whole replies and for streams of deltas.
package thinktag

import "strings"

// Split returns the visible text and the hidden reasoning of a whole reply.
//
// The transcript keeps a model's text unchanged; this decides only what is shown. The rules, applied
// left to right to the raw reply:
//
//   - A reasoning tag is <think>, <thinking> or <thought> (any case), optionally followed by a
//     blank or "/" and attributes, on one line and at most 128 bytes long; </think> and friends close.
//   - An opening tag starts a hidden block that ends at the first closing tag of any of the three
//     names. Opening tags inside a block are reasoning text (blocks do not nest), so a duplicated
//     <think> cannot swallow the answer. <think/> is an empty block.
//   - A block that is never closed hides the rest of the reply, unless nothing visible came before
//     it and no block closed earlier: then the reply is one malformed opening tag, which is removed
//     and the text after it delivered.
//   - A closing tag without a block is visible text.
//   - Tags inside fenced code (``` or ~~~, per CommonMark: up to three spaces of indentation, a
//     backtick fence's info string has no backtick, the closing fence is at least as long) and
//     inside code spans are content. A run of n backticks (not escaped by a backslash) opens a code
//     span when another run of exactly n follows before the paragraph ends (a blank line or a line
//     that opens a fence); otherwise it is literal. Indented code blocks are not recognised.
//   - A hidden block that starts a line is cut out with its line start, so a fence right after
//     </think> still opens.
//   - While nothing but blanks is visible, the blanks and newlines right after a closing tag (or
//     <think/>) are dropped, so that an answer written as "<think>…</think>\n\nHello" reads
//     "Hello". A dropped newline leaves the reader at a line start, as a read one would. Once
//     visible text has begun, whitespace after a block is part of the answer and kept.
//
// The hidden text of the blocks, joined by newlines, is the reasoning that /reasoning on shows.
// The reasoning is not trimmed, and neither is the visible text otherwise.
func Split(text string) (visible, reasoning string) {
	var f Filter
	visible = f.finish(text)
	return visible, f.Reasoning()
}

// Filter is the streaming form of Split. Write returns the visible text that can be shown now,
// holding back only what may still turn out to be a tag or a fence marker; Close returns the rest
// at the end of the reply. For any split of a reply into deltas, what Write and Close return adds
// up to Split's visible text, and Reasoning equals Split's reasoning once Close returned.
//
// Plain text is never held back by more than a partial tag or fence marker. Only when a reasoning
// tag's meaning depends on text still to come (it follows a backtick run that a later run may close,
// or sits on a line that may still open a fence) is it held, with what follows, until that is
// decided. A block that opens the reply shows nothing before it closes: if it never does, Close
// delivers it as the answer. The zero Filter is ready for use. A Filter is not safe for
// concurrent use.
type Filter struct {
	hold  []byte   // input not yet decided: the unprocessed end of the text
	wait  waitKind // what hold waits for, so that Write can skip re-reading it
	ended bool
	mode  mode

	// Text mode.
	midLine  bool   // the start of the current line was read (false: it may still open a fence)
	lineUsed bool   // something of the current line was read
	inkLine  bool   // the current line has a non-blank character; a blank line ends the paragraph
	seen     bool   // visible non-blank text was delivered
	closed   bool   // a reasoning block was closed
	trim     bool   // a block closed before anything visible: the whitespace after it is dropped
	cand     int    // a line opened with this many backticks and may still be a fence
	run      int    // length of the backtick run being read
	runEsc   bool   // that run follows an odd number of backslashes
	bs       int    // backslashes just read
	spans    runSet // lengths of backtick runs that may still open a code span, oldest first
	look     lookahead
	para     paragraph // what the last lookahead that reached a paragraph's end saw
	off      int       // offset in the reply of the text the current call reads

	// Fence mode.
	fenceCh  byte
	fenceLen int
	fl       fenceState
	fn       int // spaces, then fence characters, read on the current line

	// Hidden mode.
	rescue     bool // the open block came first: if it never closes, it is the answer
	lineAtOpen bool // the open block started a line
	reasoning  strings.Builder

	// Output of the current call, as one range of its input and what came before that range.
	outA, outB int
	outBuf     []byte
}

type mode uint8

const (
	modeText mode = iota
	modeFence
	modeHidden
)

type waitKind uint8

const (
	waitNone waitKind = iota
	waitLine          // a tag on a line that may open a fence: decided by the next backtick or newline
	waitSpan          // a tag after pending backtick runs: decided by look
	waitRun           // a line start ending in a run of fence characters: decided by another byte
)

// Write takes the next delta of the reply and returns the visible text that can be shown now.
func (f *Filter) Write(delta string) (visible string) {
	if f.ended || delta == "" {
		return ""
	}
	if len(f.hold) == 0 {
		return f.feed(delta, false)
	}
	switch f.wait {
	case waitLine:
		if index(delta, &runOrLine) < 0 {
			f.hold = append(f.hold, delta...)
			return ""
		}
	case waitSpan:
		f.look.feed(delta, &f.spans)
		if !f.look.done {
			f.hold = append(f.hold, delta...)
			return ""
		}
	case waitRun:
		if c := f.hold[len(f.hold)-1]; strings.Trim(delta, string(c)) == "" {
			f.hold = append(f.hold, delta...)
			return ""
		}
	}
	f.hold = append(f.hold, delta...)
	return f.feed(string(f.hold), false)
}

// Close ends the reply and returns the visible text that was still held back. Write and Close
// return nothing after Close.
func (f *Filter) Close() (visible string) {
	if f.ended {
		return ""
	}
	s := string(f.hold)
	f.hold = nil
	return f.finish(s)
}

// Reasoning returns the hidden reasoning read so far. Before Close it may include a block that
// Close then delivers as the answer (a reply that is one unclosed block).
func (f *Filter) Reasoning() string { return f.reasoning.String() }

// finish reads the last of the reply and applies the unclosed-block rescue.
func (f *Filter) finish(s string) string {
	f.ended = true
	v := f.feed(s, true)
	if f.mode == modeHidden && f.rescue {
		v += f.reasoning.String()
		f.reasoning.Reset()
	}
	return v
}

// feed reads s from the start; eof says no text follows. What cannot be decided yet is kept in
// hold for the next call.
func (f *Filter) feed(s string, eof bool) string {
	f.wait = waitNone
	i := 0
	for i < len(s) {
		var ok bool
		switch f.mode {
		case modeText:
			i, ok = f.text(s, i, eof)
		case modeFence:
			i, ok = f.fence(s, i), true
		default:
			i, ok = f.hidden(s, i, eof)
		}
		if !ok {
			break
		}
	}
	f.off += i
	f.hold = append(f.hold[:0], s[i:]...)
	return f.output(s)
}

// emit adds s[a:b] to the output of the current call.
func (f *Filter) emit(s string, a, b int) {
	switch {
	case a >= b:
	case f.outA == f.outB:
		f.outA, f.outB = a, b
	case a == f.outB:
		f.outB = b
	default:
		f.outBuf = append(f.outBuf, s[f.outA:f.outB]...)
		f.outA, f.outB = a, b
	}
}

// output returns what the current call emitted: a substring of s when it is one range.
func (f *Filter) output(s string) string {
	r := s[f.outA:f.outB]
	if len(f.outBuf) > 0 {
		f.outBuf = append(f.outBuf, r...)
		r = string(f.outBuf)
		f.outBuf = f.outBuf[:0]
	}
	f.outA, f.outB = 0, 0
	return r
}
