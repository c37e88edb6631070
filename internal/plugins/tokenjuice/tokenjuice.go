// Package tokenjuice compacts noisy exec and bash output before it reaches the model, keeping what
// explains the result (failures, locations, summaries) and the raw output retrievable by a handle.
//
// Compact is a pure function shared by the result middleware and `nodmix tokenjuice compact`. Its
// rules are Go code, compiled once: a command family (git, test runners, package managers,
// builds, inventories, searches, help) picks a reducer; everything else goes through a generic
// reducer that collapses progress bars, repeated lines and stack traces and keeps error lines plus
// a head, a middle window and a tail. Exact file reads (cat, sed -n, head, tail, nl, jq of a file,
// git show REV:PATH) and outputs that would not shrink enough come back byte-identical.
//
// Large outputs cost little memory: logs, path listings and searches stream line by line through
// stages that hold a bounded number of lines (lines.go, stream.go); the other families copy the
// output once and index its lines.
package tokenjuice

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"strings"
	"unicode/utf8"
)

// Input is one command's result.
type Input struct {
	Command  string   // the command line (a bash script, or an argv shell-quoted)
	Argv     []string // the argv, when the command ran without a shell; may be empty
	ExitCode int
	Output   []byte // stdout and stderr combined, as the command wrote them
	// Handle names where the full output can be fetched (tokenjuice_raw); the marker cites it. Empty
	// means the marker says only that the output was compacted.
	Handle string
}

// Output is what Compact made of an Input.
type Output struct {
	Text   string // what the model sees: the compacted text and its marker, or the raw output
	Raw    bool   // Text is the raw output, byte for byte
	Rule   string // the rule that matched, e.g. "git/status", "generic"
	Family string // e.g. "git", "tests", "build", "inventory"
	Reason string // why the output was left raw, when Raw

	RawBytes, CompactBytes   int // sizes of the raw output and of Text
	RawChars, CompactChars   int // Unicode code points
	RawTokens, CompactTokens int // EstimateTokens of each

	// Err is an internal failure of a rule (a panic), recovered: the output was left raw.
	Err error
}

// Settings tune when compaction is worth it. The zero value means the defaults.
type Settings struct {
	// MinSavings is the least fraction of characters compaction must save, marker included, or the
	// output stays raw. Default 0.2.
	MinSavings float64
	// MinSavedChars is the least number of characters it must save. Default 120.
	MinSavedChars int
}

// Defaults of Settings.
const (
	DefaultMinSavings    = 0.2
	DefaultMinSavedChars = 120
)

func (s Settings) withDefaults() Settings {
	if s.MinSavings <= 0 {
		s.MinSavings = DefaultMinSavings
	}
	if s.MinSavedChars <= 0 {
		s.MinSavedChars = DefaultMinSavedChars
	}
	return s
}

// Reasons an output is left raw.
const (
	ReasonEmpty       = "empty"
	ReasonFileRead    = "file-read"
	ReasonLowSavings  = "low-savings"
	ReasonRuleError   = "rule-error"
	ReasonPassthrough = "passthrough" // the rule keeps this output as it is
)

// Compact compacts in with the default settings. It never panics and is safe for concurrent use.
func Compact(in Input) Output { return Settings{}.Compact(in) }

// Compact compacts in. When a rule panics, the raw output is returned with Err set (fail open).
func (s Settings) Compact(in Input) (out Output) {
	s = s.withDefaults()
	out = Output{RawBytes: len(in.Output), RawChars: utf8.RuneCount(in.Output)}
	defer func() {
		if r := recover(); r != nil {
			out = rawOutput(in, out, "internal", ReasonRuleError)
			out.Err = fmt.Errorf("tokenjuice: rule panicked: %v\n%s", r, debug.Stack())
		}
	}()
	if len(bytes.TrimSpace(in.Output)) == 0 {
		return rawOutput(in, out, "none", ReasonEmpty)
	}
	cmd := parseCommand(in.Command, in.Argv)
	if cmd.isFileRead() {
		return rawOutput(in, out, "read/file", ReasonFileRead)
	}
	d := &doc{src: cmd.source(), raw: in.Output}
	r := classify(cmd)
	if r.family != "tests" && looksJSON(in.Output) && !(r.id == "build/go" && (startsGoEvents(in.Output) || isGoVet(d.src))) {
		// A JSON document is outlined whatever printed it (go's and test runners' event streams
		// and go vet's findings excepted: their reducers read them, and every finding matters).
		if d.json = parseJSONValues(in.Output); d.json != nil {
			r = jsonRule
		}
	}
	if !r.streams {
		d.lines = normalize(in.Output)
	}
	body, ok := r.reduce(d)
	if !ok {
		r = genericRule
		body, _ = r.reduce(d)
	}
	out.Rule, out.Family = r.id, r.family
	if body == passthrough {
		return rawOutput(in, out, r.id, ReasonPassthrough)
	}
	body = strings.TrimRight(body, "\n")
	text := body + "\n" + marker(out.RawChars, charCount(body), in.Handle)
	chars := charCount(text)
	if saved := out.RawChars - chars; saved < s.MinSavedChars || float64(saved) < s.MinSavings*float64(out.RawChars) {
		return rawOutput(in, out, r.id, ReasonLowSavings)
	}
	out.Text = text
	out.CompactBytes, out.CompactChars = len(text), chars
	out.RawTokens, out.CompactTokens = estimateTokens(in.Output), EstimateTokens(text)
	return out
}

func rawOutput(in Input, out Output, rule, reason string) Output {
	raw := string(in.Output)
	out.Text, out.Raw, out.Reason = raw, true, reason
	if out.Rule == "" {
		out.Rule = rule
	}
	out.CompactBytes, out.CompactChars = out.RawBytes, out.RawChars
	out.RawTokens = estimateTokens(in.Output)
	out.CompactTokens = out.RawTokens
	return out
}

// marker ends every compacted text: it says that the text was compacted, from how many characters
// to how many, and which tool call gets the full output back. It is short on purpose, since every
// compacted result pays for it; the rule is in the result's structured content, not in the text.
func marker(rawChars, bodyChars int, handle string) string {
	if handle == "" {
		return fmt.Sprintf("[tokenjuice: compacted %s→%s chars]", group(rawChars), group(bodyChars))
	}
	return fmt.Sprintf("[tokenjuice: compacted %s→%s; tokenjuice_raw %s]", group(rawChars), group(bodyChars), handle)
}

// passthrough is what a reducer returns to keep the output raw on purpose.
const passthrough = "\x00passthrough"

// doc is one output as reducers see it.
type doc struct {
	src   *simple  // the source command of the main pipeline
	raw   []byte   // the output as the command wrote it
	lines []string // normalized lines; nil for rules that stream raw
	json  []*jnode // the parsed values, when the whole output is JSON
}

// rule is one command family's reducer. reduce returns false when the output is not what the rule
// expects; the generic reducer then takes over.
type rule struct {
	id     string
	family string
	match  func(c *command, s *simple) bool
	reduce func(d *doc) (string, bool)
	// streams says reduce reads d.raw line by line (with bounded memory) and needs no d.lines.
	streams bool
}

// classify picks the rule for a command. Compound commands are classified by their last
// substantive segment; pipelines by their source, unless a later stage reshapes the output.
func classify(c *command) *rule {
	s := c.source()
	for _, f := range c.filters() {
		if !shapeKeeping[f.name()] {
			return genericRule
		}
	}
	for _, r := range rules {
		if r.match(c, s) {
			return r
		}
	}
	return genericRule
}

// shapeKeeping filters pass some of their input lines through unchanged.
var shapeKeeping = map[string]bool{
	"head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "less": true,
	"more": true, "cat": true, "tee": true, "uniq": true, "sort": true, "nl": true,
}
