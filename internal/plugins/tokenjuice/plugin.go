package tokenjuice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/plugin"
)

// ID is the plugin id; RawToolName the name of its tool.
const (
	ID          = "tokenjuice"
	RawToolName = "tokenjuice_raw"
)

// Factory is the bundled plugin. It is opt-in: plugins.entries.tokenjuice.enabled.
var Factory = plugin.Factory{
	Info: plugin.Info{
		ID:          ID,
		Description: "Compacts noisy exec and bash output before it reaches the model; the full output stays retrievable with tokenjuice_raw.",
		Tools:       []string{RawToolName},
		Middleware:  []string{"exec", "bash"},
	},
	New: func() plugin.Plugin { return New() },
}

// Plugin is one tokenjuice instance: the result middleware and the tokenjuice_raw tool. Its
// lifecycle methods are called from one goroutine; the middleware and the tool executor it hands
// out are safe for concurrent use.
type Plugin struct {
	cfg      config
	settings Settings
	store    RawStore
	log      *slog.Logger
}

var (
	_ plugin.Plugin             = (*Plugin)(nil)
	_ plugin.ToolProvider       = (*Plugin)(nil)
	_ plugin.MiddlewareProvider = (*Plugin)(nil)
)

// New returns an unconfigured plugin.
func New() *Plugin { return &Plugin{} }

// UseStore replaces the default in-memory store, e.g. with a persistent one shared with the CLI.
// It must be called before Init.
func (p *Plugin) UseStore(s RawStore) { p.store = s }

// config is plugins.entries.tokenjuice.config, all optional:
//
//	maxRawBytes: 67108864,  // size of the in-memory raw output store
//	minSavings: 0.2,        // least fraction of characters compaction must save
//	minSavedChars: 120,     // least number of characters it must save
type config struct {
	MaxRawBytes   *int64   `json:"maxRawBytes"`
	MinSavings    *float64 `json:"minSavings"`
	MinSavedChars *int     `json:"minSavedChars"`
}

// Decode reads the config section strictly: unknown fields and wrong types are errors that name
// the field, every one of the section joined (a field in error keeps its default).
func (p *Plugin) Decode(raw json.RawMessage) error {
	p.cfg = config{}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return plugin.FieldError("", "must be an object")
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	fail := func(path, rule string) { errs = append(errs, plugin.FieldError(path, rule)) }
	for _, k := range names {
		v := fields[k]
		switch k {
		case "maxRawBytes":
			var n int64
			if json.Unmarshal(v, &n) != nil || n <= 0 {
				fail("maxRawBytes", "must be a positive integer (bytes)")
				continue
			}
			p.cfg.MaxRawBytes = &n
		case "minSavings":
			var f float64
			if json.Unmarshal(v, &f) != nil || math.IsNaN(f) || f <= 0 || f >= 1 {
				fail("minSavings", "must be a number between 0 and 1 (exclusive)")
				continue
			}
			p.cfg.MinSavings = &f
		case "minSavedChars":
			var n int
			if json.Unmarshal(v, &n) != nil || n < 0 {
				fail("minSavedChars", "must be a non-negative integer")
				continue
			}
			p.cfg.MinSavedChars = &n
		default:
			fail(k, "unknown field (allowed: maxRawBytes, minSavings, minSavedChars)")
		}
	}
	if len(errs) > 0 {
		p.cfg = config{}
		return errors.Join(errs...)
	}
	return nil
}

// Init sets up the store (in memory unless UseStore gave one) and the thresholds. No I/O.
func (p *Plugin) Init(_ context.Context, host plugin.Host) error {
	p.log = host.Log
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.cfg.MinSavings != nil {
		p.settings.MinSavings = *p.cfg.MinSavings
	}
	if p.cfg.MinSavedChars != nil {
		p.settings.MinSavedChars = max(*p.cfg.MinSavedChars, 1)
	}
	if p.store == nil {
		var n int64
		if p.cfg.MaxRawBytes != nil {
			n = *p.cfg.MaxRawBytes
		}
		p.store = NewMemStore(n)
	}
	return nil
}

// Validate has nothing to check beyond Decode.
func (p *Plugin) Validate() error { return nil }

// Close releases nothing: the in-memory store goes with the process.
func (p *Plugin) Close() error { return nil }

// Middleware returns the result middleware for exec and bash.
func (p *Plugin) Middleware() dispatch.Middleware { return &middleware{p: p} }

// Tools returns tokenjuice_raw.
func (p *Plugin) Tools() []catalog.Entry {
	return []catalog.Entry{{
		Tool: catalog.Tool{
			ID:    catalog.ID(catalog.SourcePlugin, ID, RawToolName),
			Name:  RawToolName,
			Label: "Tokenjuice raw output",
			Description: "Return the full output of an exec or bash call that tokenjuice compacted. The compacted " +
				"result ends with a marker naming its handle (tj_...). Long outputs come in pages: pass offset " +
				"(bytes) to continue where the previous page ended.",
			InputSchema: json.RawMessage(rawSchema),
			Source:      catalog.SourcePlugin,
			Owner:       ID,
			LoadMode:    catalog.Discoverable,
		},
		Exec: &rawTool{p: p},
	}}
}

const rawSchema = `{"type":"object","properties":{` +
	`"handle":{"type":"string","description":"The handle from the tokenjuice marker, e.g. tj_1a2b3c4d5e6f."},` +
	`"offset":{"type":"integer","minimum":0,"description":"Byte offset to start from (default 0)."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":1048576,"description":"Most bytes to return (default 200000)."}},` +
	`"required":["handle"],"additionalProperties":false}`

// middleware compacts the output of the built-in exec and bash tools. It relies on their result
// contract (see package internal/builtin/exec): Content[0] is the output, Structured carries
// "command", "exit_code" and "output". Anything else passes through untouched.
type middleware struct{ p *Plugin }

var _ dispatch.Middleware = (*middleware)(nil)

// Process never fails a call: on any surprise it returns res itself.
func (m *middleware) Process(ctx context.Context, call catalog.Call, res *catalog.Result) (*catalog.Result, error) {
	t := call.Tool
	if res == nil || t == nil || t.Source != catalog.SourceBuiltin || (t.Name != "exec" && t.Name != "bash") {
		return res, nil
	}
	var fields map[string]json.RawMessage
	if len(res.Structured) == 0 || json.Unmarshal(res.Structured, &fields) != nil {
		return res, nil
	}
	var in Input
	var output string
	if json.Unmarshal(fields["command"], &in.Command) != nil || json.Unmarshal(fields["exit_code"], &in.ExitCode) != nil ||
		json.Unmarshal(fields["output"], &output) != nil || output == "" {
		return res, nil
	}
	if argv, ok := fields["argv"]; ok {
		_ = json.Unmarshal(argv, &in.Argv)
	}
	if len(res.Content) == 0 || res.Content[0].Type != "text" || res.Content[0].Text != output {
		return res, nil
	}
	in.Output = []byte(output)
	in.Handle = NewHandle()
	out := m.p.settings.Compact(in)
	if out.Err != nil {
		m.p.log.Error("tokenjuice rule failed; passing the raw output", "tool", t.Name, "rule", out.Rule, "err", out.Err)
		return res, nil
	}
	if out.Raw {
		return res, nil
	}
	if err := m.p.store.Put(ctx, call.Session, in.Handle, in.Output); err != nil {
		m.p.log.Warn("tokenjuice could not keep the raw output; compacting without a handle", "err", err)
		in.Handle = ""
		out = m.p.settings.Compact(in)
		if out.Raw || out.Err != nil {
			return res, nil
		}
	}
	meta := map[string]any{
		"compacted": true, "rule": out.Rule, "family": out.Family,
		"raw_chars": out.RawChars, "compact_chars": out.CompactChars,
		"raw_tokens_est": out.RawTokens, "compact_tokens_est": out.CompactTokens,
	}
	if in.Handle != "" {
		meta["handle"] = in.Handle
	}
	fields["output"], _ = json.Marshal(out.Text)
	fields["tokenjuice"], _ = json.Marshal(meta)
	structured, err := json.Marshal(fields)
	if err != nil {
		return res, nil
	}
	content := append([]catalog.Content(nil), res.Content...)
	content[0].Text = out.Text
	return &catalog.Result{Content: content, Structured: structured, IsError: res.IsError}, nil
}

// rawTool is tokenjuice_raw. Safe for concurrent use.
type rawTool struct{ p *Plugin }

const defaultRawLimit = 200_000

func (r *rawTool) Execute(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
	var args struct {
		Handle string `json:"handle"`
		Offset *int64 `json:"offset"`
		Limit  *int64 `json:"limit"`
	}
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return catalog.ErrorResult("Invalid arguments: " + strings.TrimPrefix(err.Error(), "json: ") + " (allowed: handle, offset, limit)"), nil
	}
	if !strings.HasPrefix(args.Handle, "tj_") {
		return catalog.ErrorResult(`Invalid arguments: handle: required, the "tj_..." handle from a tokenjuice marker`), nil
	}
	offset, limit := int64(0), int64(defaultRawLimit)
	if args.Offset != nil {
		if *args.Offset < 0 {
			return catalog.ErrorResult("Invalid arguments: offset: must be at least 0"), nil
		}
		offset = *args.Offset
	}
	if args.Limit != nil {
		if *args.Limit < 1 || *args.Limit > 1<<20 {
			return catalog.ErrorResult("Invalid arguments: limit: must be between 1 and 1048576"), nil
		}
		limit = *args.Limit
	}
	data, err := r.p.store.Get(ctx, args.Handle)
	if errors.Is(err, ErrNotFound) {
		return catalog.ErrorResult(fmt.Sprintf("No output is stored under handle %q: it was never stored, or older outputs were evicted. Run the command again if you need its output.", args.Handle)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenjuice_raw: read %s: %w", args.Handle, err)
	}
	total := int64(len(data))
	if offset > total {
		offset = total
	}
	for offset < total && !utf8.RuneStart(data[offset]) { // never split a character
		offset++
	}
	end := min(offset+limit, total)
	for end < total && end > offset && !utf8.RuneStart(data[end]) {
		end--
	}
	if end == offset && offset < total {
		// A limit smaller than this character: return the whole character, so the page moves on.
		for end++; end < total && !utf8.RuneStart(data[end]); end++ {
		}
	}
	text := string(data[offset:end])
	meta := map[string]any{"handle": args.Handle, "offset": offset, "bytes": end - offset, "total_bytes": total}
	if end < total {
		meta["next_offset"] = end
		text += fmt.Sprintf("\n[tokenjuice_raw: bytes %d-%d of %d; call again with offset %d for more]", offset, end, total, end)
	}
	structured, _ := json.Marshal(meta)
	return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: text}}, Structured: structured}, nil
}
