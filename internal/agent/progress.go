package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/llm"
)

// ToolRun is one tool call of a turn with its result, for faces that report them (/verbose,
// /trace) and for the session's counters.
type ToolRun struct {
	Call   llm.Part
	Result *catalog.Result
}

// Limits of what progress messages show: a summary is one short line; a full output bubble is
// bounded so that a tool printing megabytes does not flood a chat.
const (
	summaryArg = 80
	rawDetail  = 300
	OutputMax  = 2000
)

// ToolSummary is the /verbose line for a call as it starts: "🛠️ Exec: git status". With detail
// "raw" (agents.defaults.toolProgressDetail) the call's raw arguments are appended.
func ToolSummary(call llm.Part, detail string) string {
	var args map[string]any
	_ = json.Unmarshal(call.Args, &args)
	line := "🛠️ " + toolLabel(call.Name)
	if arg := salientArg(args); arg != "" {
		line += ": " + clip(arg, summaryArg)
	}
	if detail == "raw" && len(call.Args) > 0 {
		line += ", " + clip(string(call.Args), rawDetail)
	}
	return line
}

// ToolFailure is the line a failed call gets in every verbose mode; the raw error detail is
// appended only with /verbose full.
func ToolFailure(run ToolRun, full bool) string {
	line := "⚠️ " + toolLabel(run.Call.Name) + " failed"
	if full {
		line += ": " + clip(firstLine(run.Result.Text()), rawDetail)
	}
	return line
}

// ToolOutput is the /verbose full bubble sent after a call completes, truncated to OutputMax.
func ToolOutput(run ToolRun) string {
	text := run.Result.Text()
	if utf8.RuneCountInString(text) > OutputMax {
		text = clip(text, OutputMax) + fmt.Sprintf("\n[%d characters not shown]", utf8.RuneCountInString(run.Result.Text())-OutputMax)
	}
	return "📄 " + toolLabel(run.Call.Name) + " output:\n" + text
}

// toolLabel is a readable tool name: "Exec", "Tool search", "github: create_issue".
func toolLabel(name string) string {
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			return server + ": " + tool
		}
	}
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return "Tool"
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

// salientArg is the argument that says what a call does, by the names tools commonly use.
func salientArg(args map[string]any) string {
	for _, k := range []string{"command", "query", "code", "url", "urls", "path", "id", "name"} {
		if v, ok := args[k]; ok {
			switch v := v.(type) {
			case string:
				return firstLine(v)
			case []any:
				parts := make([]string, 0, len(v))
				for _, x := range v {
					parts = append(parts, fmt.Sprint(x))
				}
				return strings.Join(parts, " ")
			}
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// tokenjuiceMeta is what the tokenjuice middleware records in a compacted result.
type tokenjuiceMeta struct {
	Compacted    bool   `json:"compacted"`
	Rule         string `json:"rule"`
	RawChars     int    `json:"raw_chars"`
	CompactChars int    `json:"compact_chars"`
	Handle       string `json:"handle"`
}

// tokenjuiceOf reads the tokenjuice record of a result: at its top, as a direct call of exec or
// bash leaves it, or in the wrapped result of a tool_call that reached such a tool, whose name it
// also returns (empty for a direct call).
func tokenjuiceOf(res *catalog.Result) (tokenjuiceMeta, string, bool) {
	if res == nil || len(res.Structured) == 0 {
		return tokenjuiceMeta{}, "", false
	}
	var f struct {
		Tokenjuice *tokenjuiceMeta `json:"tokenjuice"`
		Tool       struct {
			Name string `json:"name"`
		} `json:"tool"`
		Result struct {
			Details struct {
				Tokenjuice *tokenjuiceMeta `json:"tokenjuice"`
			} `json:"details"`
		} `json:"result"`
	}
	if json.Unmarshal(res.Structured, &f) != nil {
		return tokenjuiceMeta{}, "", false
	}
	if tj := f.Tokenjuice; tj != nil && tj.Compacted {
		return *tj, "", true
	}
	if tj := f.Result.Details.Tokenjuice; tj != nil && tj.Compacted {
		return *tj, f.Tool.Name, true
	}
	return tokenjuiceMeta{}, "", false
}

// TraceLines are the /trace lines of a turn: what the plugins did — Tool Search's searches,
// describes and bridged calls, and tokenjuice's compactions.
func TraceLines(runs []ToolRun) []string {
	var out []string
	for _, r := range runs {
		var args map[string]any
		_ = json.Unmarshal(r.Call.Args, &args)
		switch r.Call.Name {
		case "tool_search":
			out = append(out, fmt.Sprintf("🔎 Tool Search: search %q → %d hit(s)", args["query"], countHits(r.Result)))
		case "tool_describe":
			out = append(out, fmt.Sprintf("🔎 Tool Search: describe %v", args["id"]))
		case "tool_call":
			status := "ok"
			if r.Result != nil && r.Result.IsError {
				status = "error"
			}
			out = append(out, fmt.Sprintf("🔎 Tool Search: call %v (%s)", args["id"], status))
		case "tool_search_code":
			out = append(out, "🔎 Tool Search: code — "+codeTelemetry(r.Result))
		case "search_tool_bm25":
			out = append(out, fmt.Sprintf("🔎 Discovery: search %q", args["query"]))
		}
		if tj, inner, ok := tokenjuiceOf(r.Result); ok {
			name := r.Call.Name
			if inner != "" {
				name = inner
			}
			saved := 0
			if tj.RawChars > 0 {
				saved = 100 * (tj.RawChars - tj.CompactChars) / tj.RawChars
			}
			out = append(out, fmt.Sprintf("🧃 tokenjuice: %s output %d → %d characters (%d%% saved, rule %s, full output: %s)",
				name, tj.RawChars, tj.CompactChars, saved, tj.Rule, tj.Handle))
		}
	}
	return out
}

func countHits(res *catalog.Result) int {
	var hits []json.RawMessage
	if res == nil || json.Unmarshal([]byte(res.Text()), &hits) != nil {
		var wrapped struct {
			Results []json.RawMessage `json:"results"`
		}
		if res != nil && json.Unmarshal([]byte(res.Text()), &wrapped) == nil {
			return len(wrapped.Results)
		}
		return 0
	}
	return len(hits)
}

func codeTelemetry(res *catalog.Result) string {
	var v struct {
		OK        *bool `json:"ok"`
		Telemetry struct {
			SearchCount   int `json:"searchCount"`
			DescribeCount int `json:"describeCount"`
			CallCount     int `json:"callCount"`
		} `json:"telemetry"`
	}
	if res == nil || json.Unmarshal([]byte(res.Text()), &v) != nil {
		if res != nil && res.IsError {
			return "failed"
		}
		return "ran"
	}
	return fmt.Sprintf("%d search(es), %d describe(s), %d call(s)", v.Telemetry.SearchCount, v.Telemetry.DescribeCount, v.Telemetry.CallCount)
}
