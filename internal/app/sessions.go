package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/thinking"
)

// SessionLevels are the levels a session's next turn runs with (before any inline directive of
// its message), and which layer each came from.
type SessionLevels struct {
	Thinking  thinking.Level    `json:"thinking"` // "" when the provider owns the default
	Fast      thinking.FastMode `json:"fast"`
	Verbose   string            `json:"verbose"`
	Trace     string            `json:"trace"`
	Reasoning string            `json:"reasoning"`
	Sources   map[string]string `json:"sources"` // override key → directive.Source
}

// Economy is what a session's tool surface cost and saved, from the counters the turn loop keeps:
// the tool schemas the model saw up front against what direct exposure would have sent for the
// same catalog, the discovery operations it ran, and the characters tokenjuice kept out of the
// transcript. Byte and count figures are sums over the session's model calls.
type Economy struct {
	ModelCalls  int64 `json:"modelCalls"`
	SchemaCount int64 `json:"schemaCount"` // tool schemas sent up front
	SchemaBytes int64 `json:"schemaBytes"` // their serialized size
	// DirectSchemaBytes is what direct exposure of the allowed catalog would have sent instead.
	DirectSchemaBytes int64 `json:"directSchemaBytes"`
	// SavedSchemaBytes is DirectSchemaBytes − SchemaBytes; negative when the surface cost more.
	SavedSchemaBytes int64 `json:"savedSchemaBytes"`
	// CatalogTools is how many tools direct exposure would send now (the catalog may have
	// changed since the session's calls).
	CatalogTools int   `json:"catalogTools"`
	ToolCalls    int64 `json:"toolCalls"` // every tool call the model made
	Searches     int64 `json:"searches"`  // tool_search and search_tool_bm25
	Describes    int64 `json:"describes"` // tool_describe
	Calls        int64 `json:"calls"`     // tool_call
	CodeRuns     int64 `json:"codeRuns"`  // tool_search_code
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// TokenjuiceSavedChars is how many characters of tool output tokenjuice kept from the model.
	TokenjuiceSavedChars int64 `json:"tokenjuiceSavedChars"`
	// Tokenjuice details the compacted results, read from their markers in the transcript, so
	// only a single session's row has it.
	Tokenjuice *TokenjuiceSavings `json:"tokenjuice,omitempty"`
}

// TokenjuiceSavings sums the tool results tokenjuice compacted in a transcript.
type TokenjuiceSavings struct {
	Results      int   `json:"results"`
	RawChars     int64 `json:"rawChars"`
	CompactChars int64 `json:"compactChars"`
	SavedChars   int64 `json:"savedChars"`
}

// SessionRow is one session as the sessions API and the web page show it. A row for a session
// that does not exist yet (Key "") is the defaults a new session starts from.
type SessionRow struct {
	Key string `json:"key"`
	// Model is the session's pinned model, else the one its turns resolve to.
	Model       string `json:"model"`
	ModelPinned bool   `json:"modelPinned"`
	// ModelError says why no model resolves (none configured, unknown provider); the levels are
	// then those of a model nodmix knows nothing about.
	ModelError string        `json:"modelError,omitempty"`
	Agent      string        `json:"agent,omitempty"`
	Levels     SessionLevels `json:"levels"`
	// Overrides are the session's stored directive overrides, keyed thinking, fast, verbose,
	// trace, reasoning.
	Overrides map[string]string `json:"overrides"`
	// ThinkingLevels is the model's profile: every level a picker offers, with its label.
	ThinkingLevels []thinking.Option `json:"thinkingLevels"`
	// ThinkingOptions are the same levels' labels (the legacy list).
	ThinkingOptions []string `json:"thinkingOptions"`
	// ThinkingDefault is the level the session inherits when it has no thinking override.
	ThinkingDefault thinking.Level `json:"thinkingDefault"`
	// ThinkingMenu is the picker's entries (directive.ThinkingMenu), the selected one marked.
	ThinkingMenu []directive.Choice `json:"thinkingMenu"`
	// Notice is set when the stored thinking level is not supported by the model and is remapped.
	Notice   string           `json:"notice,omitempty"`
	Messages int              `json:"messages"`
	Created  time.Time        `json:"created,omitzero"`
	Updated  time.Time        `json:"updated,omitzero"`
	Counters map[string]int64 `json:"counters"`
	Economy  Economy          `json:"economy"`
}

// TranscriptPart is one part of a transcript message as the API shows it: provider-opaque
// fields (signatures, encrypted reasoning) stay in the store.
type TranscriptPart struct {
	Kind     llm.Kind `json:"kind"`
	Text     string   `json:"text,omitempty"`
	ImageURL string   `json:"image_url,omitempty"`
	CallID   string   `json:"call_id,omitempty"`
	Name     string   `json:"name,omitempty"`
	Args     string   `json:"args,omitempty"`
	IsError  bool     `json:"is_error,omitempty"`
}

// TranscriptMessage is one message of a session's transcript.
type TranscriptMessage struct {
	Role  llm.Role         `json:"role"`
	Parts []TranscriptPart `json:"parts"`
}

// SessionDetail is a session's row with its transcript.
type SessionDetail struct {
	SessionRow
	Transcript []TranscriptMessage `json:"transcript"`
}

// SessionRows lists a page of up to limit sessions after the cursor, most recently updated
// first (session.Store.SessionsPage), and the cursor of the next page (zero after the last).
func (a *App) SessionRows(ctx context.Context, after session.Cursor, limit int) ([]SessionRow, session.Cursor, error) {
	infos, next, err := a.Store.SessionsPage(ctx, after, limit)
	if err != nil {
		return nil, session.Cursor{}, fmt.Errorf("sessions: %w", err)
	}
	rows := make([]SessionRow, 0, len(infos))
	for i := range infos {
		rows = append(rows, a.rowFor(&infos[i]))
	}
	return rows, next, nil
}

// SessionDefaults is the row a session that does not exist yet would have.
func (a *App) SessionDefaults() SessionRow {
	return a.rowFor(&session.Info{})
}

// SessionRow returns one session with its transcript; session.ErrNotFound if there is none.
func (a *App) SessionRow(ctx context.Context, key string) (*SessionDetail, error) {
	if err := session.CheckKey(key); err != nil {
		return nil, err
	}
	info, err := a.Store.Session(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", key, err)
	}
	msgs, err := a.Store.Transcript(ctx, key)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		return nil, fmt.Errorf("session %q: %w", key, err)
	}
	d := &SessionDetail{SessionRow: a.rowFor(info), Transcript: transcriptView(msgs)}
	tj := tokenjuiceSavings(msgs)
	d.Economy.Tokenjuice = &tj
	return d, nil
}

// DeleteSession removes a session and everything kept for it; session.ErrNotFound if none.
func (a *App) DeleteSession(ctx context.Context, key string) error {
	if err := session.CheckKey(key); err != nil {
		return err
	}
	if err := a.Store.DeleteSession(ctx, key); err != nil {
		return fmt.Errorf("session %q: %w", key, err)
	}
	// Its log goes too. The session is gone either way: a log left behind is only a warning.
	if a.Telemetry != nil {
		if err := a.Telemetry.Remove(key); err != nil {
			a.Log.Warn("delete session: remove its log", "session", key, "err", err)
		}
	}
	return nil
}

// PatchModel is the SessionPatch key that pins a session's model.
const PatchModel = "model"

// PatchKeys are the keys a SessionPatch may hold, in the order they are applied: the model
// first, so that the levels are checked against the model the session will run.
var PatchKeys = []string{PatchModel, directive.KeyThinking, directive.KeyFast, directive.KeyVerbose,
	directive.KeyTrace, directive.KeyReasoning}

// SessionPatch is the documented sessions.patch: for each key present, a value sets the
// session's override (or pins its model) and nil clears it. A value is read as the directive
// would read it ("on" is a binary provider's low; "default" and "inherit" clear). Keys absent
// are left alone.
type SessionPatch map[string]*string

// ErrInvalidPatch is what a PatchError matches.
var ErrInvalidPatch = errors.New("invalid session patch")

// PatchError is a refused SessionPatch field: nothing of the patch was written.
type PatchError struct {
	Field string
	Value string
	// Options are the values the field accepts (null clears any of them).
	Options []string
	// Rule says why, when it is more than "not one of the options".
	Rule string
}

func (e *PatchError) Error() string {
	rule := e.Rule
	if rule == "" {
		rule = fmt.Sprintf("%q is not a valid value", e.Value)
	}
	if len(e.Options) == 0 {
		return e.Field + ": " + rule
	}
	return fmt.Sprintf("%s: %s; valid options: %s (or null to clear)", e.Field, rule, strings.Join(e.Options, ", "))
}

// Is makes errors.Is(err, ErrInvalidPatch) true.
func (e *PatchError) Is(target error) bool { return target == ErrInvalidPatch }

// PatchSession applies a sessions.patch in one store transaction, creating the session, and
// returns its row. A thinking level is checked against the model the session runs after the
// patch and stored as a /think directive stores it; an invalid value fails the whole patch with
// a *PatchError and changes nothing.
func (a *App) PatchSession(ctx context.Context, key string, patch SessionPatch) (*SessionRow, error) {
	if err := session.CheckKey(key); err != nil {
		return nil, err
	}
	for k := range patch {
		if !slices.Contains(PatchKeys, k) {
			return nil, &PatchError{Field: k, Rule: "unknown field", Options: PatchKeys}
		}
	}
	info, err := a.Store.Update(ctx, key, func(in *session.Info) error {
		return a.applyPatch(in, patch)
	})
	if err != nil {
		var pe *PatchError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("session %q: %w", key, err)
	}
	row := a.rowFor(info)
	return &row, nil
}

// applyPatch changes in as patch says; it reads config only (it runs inside a store transaction).
func (a *App) applyPatch(in *session.Info, patch SessionPatch) error {
	model := in.Model
	if v, ok := patch[PatchModel]; ok {
		switch {
		case v == nil:
			model = ""
		case strings.TrimSpace(*v) == "":
			return &PatchError{Field: PatchModel, Value: *v, Rule: `must be "provider/model"`, Options: a.modelRefs()}
		default:
			model = strings.TrimSpace(*v)
			if _, err := a.resolveModel(model); err != nil {
				return &PatchError{Field: PatchModel, Value: model, Rule: err.Error(), Options: a.modelRefs()}
			}
		}
	}
	l, _, _ := a.sessionLayers(&session.Info{Model: model, Agent: in.Agent, Overrides: in.Overrides})
	var ds []directive.D
	for _, k := range PatchKeys[1:] {
		v, ok := patch[k]
		if !ok {
			continue
		}
		d, err := patchDirective(k, v, l.Profile)
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	if len(ds) > 0 {
		l.Session = in.Overrides
		if reply, ok := directive.Check(ds, l); !ok {
			return &PatchError{Field: string(ds[0].Name), Rule: reply} // patchDirective checks the same; kept as a guard
		}
		in.Overrides = directive.Apply(ds, l).Overrides
	}
	in.Model = model
	return nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// patchDirective turns one patch field into the directive that sets it, or refuses its value.
func patchDirective(key string, v *string, p thinking.Profile) (directive.D, error) {
	name := directive.Name(key)
	if key == directive.KeyThinking {
		name = directive.Think
	}
	if v == nil || thinking.IsClear(*v) {
		return directive.D{Name: name, Clear: true}, nil
	}
	raw := *v
	d := directive.D{Name: name, Raw: raw}
	var ok bool
	var options []string
	switch key {
	case directive.KeyThinking:
		var l thinking.Level
		l, ok = thinking.NormalizeThink(raw)
		ok = ok && (len(p.Levels) == 0 || p.Supports(l))
		d.Value = string(l)
		options = thinkingChoices(p)
	case directive.KeyFast:
		var m thinking.FastMode
		m, ok = thinking.NormalizeFast(raw)
		d.Value = string(m)
		options = []string{"on", "off", "auto", "default"}
	case directive.KeyVerbose:
		d.Value, ok = thinking.NormalizeVerbose(raw)
		options = []string{"on", "full", "off", "inherit"}
	case directive.KeyTrace:
		d.Value, ok = thinking.NormalizeTrace(raw)
		options = []string{"on", "off", "raw", "inherit"}
	case directive.KeyReasoning:
		d.Value, ok = thinking.NormalizeReasoning(raw)
		options = []string{"on", "off", "stream", "inherit"}
	}
	if !ok {
		return d, &PatchError{Field: key, Value: raw, Options: options}
	}
	return d, nil
}

// thinkingChoices are the values a thinking patch accepts on a profile: each level's id, and its
// label where the provider names it otherwise ("on").
func thinkingChoices(p thinking.Profile) []string {
	out := []string{"default"}
	for _, o := range profileLevels(p) {
		out = append(out, string(o.ID))
		if o.Label != string(o.ID) {
			out = append(out, o.Label)
		}
	}
	return out
}

// profileLevels is p's levels; a zero profile (a model nodmix cannot resolve) accepts them all.
func profileLevels(p thinking.Profile) []thinking.Option {
	if len(p.Levels) > 0 {
		return p.Levels
	}
	var out []thinking.Option
	for _, l := range thinking.All() {
		out = append(out, thinking.Option{ID: l, Label: string(l)})
	}
	return out
}

func (a *App) modelRefs() []string {
	var out []string
	for _, m := range a.Models() {
		out = append(out, m.Ref)
	}
	return out
}

// SessionModel is the model a session's next turn runs without a --model of its own: the one
// pinned in it, else its agent's default (pinned false), or "" when none is configured.
func (a *App) SessionModel(in *session.Info) (ref string, pinned bool) {
	if in.Model != "" {
		return in.Model, true
	}
	return a.defaultModel(in.Agent), false
}

// defaultModel is the model a session without a pinned one runs: its agent's, else
// agents.defaults.model.
func (a *App) defaultModel(agentID string) string {
	if s, ok := a.Config.Agents.Agent(agentID); ok && s.Model != "" {
		return s.Model
	}
	return a.Config.Agents.Default.Model
}

// sessionLayers are the layers a session's levels resolve from, with the model ref they are for
// and why no model resolves (nil when one does).
func (a *App) sessionLayers(info *session.Info) (directive.Layers, string, error) {
	ref := info.Model
	if ref == "" {
		ref = a.defaultModel(info.Agent)
	}
	if ref == "" {
		agentSettings, _ := a.Config.Agents.Agent(info.Agent)
		l := directive.Layers{Session: info.Overrides, Agent: defaultsOf(agentSettings, nil),
			Global: defaultsOf(a.Config.Agents.Default, nil)}
		return l, "", fmt.Errorf("%w: set agents.defaults.model, or pin one with the session's model", ErrNoModel)
	}
	rm, err := a.resolveModel(ref)
	if err != nil {
		agentSettings, _ := a.Config.Agents.Agent(info.Agent)
		return directive.Layers{Session: info.Overrides, Agent: defaultsOf(agentSettings, nil),
			Global: defaultsOf(a.Config.Agents.Default, nil), Model: ref}, ref, err
	}
	maxTokens := 0
	if rm.prov != nil {
		if m, ok := rm.prov.Model(rm.id); ok {
			maxTokens = m.MaxTokens
		}
	}
	return a.layers(info.Agent, info.Overrides, rm, a.target(rm, maxTokens, "")), ref, nil
}

// rowFor builds a session's row from its stored state and the config.
func (a *App) rowFor(info *session.Info) SessionRow {
	l, ref, err := a.sessionLayers(info)
	r := directive.Resolve(l)
	inherit := l
	inherit.Session = nil
	levels := profileLevels(l.Profile)
	row := SessionRow{
		Key: info.Key, Model: ref, ModelPinned: info.Model != "", Agent: info.Agent,
		Levels: SessionLevels{Thinking: r.Think, Fast: r.Fast, Verbose: r.Verbose, Trace: r.Trace, Reasoning: r.Reasoning,
			Sources: map[string]string{
				directive.KeyThinking: string(r.Sources.Think), directive.KeyFast: string(r.Sources.Fast),
				directive.KeyVerbose: string(r.Sources.Verbose), directive.KeyTrace: string(r.Sources.Trace),
				directive.KeyReasoning: string(r.Sources.Reasoning),
			}},
		Overrides:       nonNil(maps.Clone(info.Overrides)),
		ThinkingLevels:  levels,
		ThinkingDefault: directive.Resolve(inherit).Think,
		ThinkingMenu:    directive.ThinkingMenu(l),
		Messages:        info.Messages,
		Created:         info.Created,
		Updated:         info.Updated,
		Counters:        map[string]int64{},
	}
	if err != nil {
		row.ModelError = err.Error()
	}
	for _, o := range levels {
		row.ThinkingOptions = append(row.ThinkingOptions, o.Label)
	}
	if len(l.Profile.Levels) == 0 {
		// ThinkingMenu lists the profile's levels; a zero profile accepts every level. Its
		// default stays what the zero profile resolves to (off), or the first entry would read
		// "Inherited: default" while the row's thinkingDefault says off.
		l.Profile.Levels = levels
		l.Profile.Default = row.ThinkingDefault
		row.ThinkingMenu = directive.ThinkingMenu(l)
	}
	row.Notice, _ = directive.RemapNotice(l)
	maps.Copy(row.Counters, info.Counters)
	row.Economy = a.economy(info.Counters)
	return row
}

func (a *App) economy(c map[string]int64) Economy {
	e := Economy{
		ModelCalls: c["model_calls"], SchemaCount: c["schema_count"], SchemaBytes: c["schema_bytes"],
		DirectSchemaBytes: c["direct_schema_bytes"], ToolCalls: c["tool_calls"],
		Searches: c["tool_search"] + c["search_tool_bm25"], Describes: c["tool_describe"], Calls: c["tool_call"],
		CodeRuns: c["tool_search_code"], InputTokens: c["input_tokens"], OutputTokens: c["output_tokens"],
		TokenjuiceSavedChars: c["tokenjuice_saved_chars"],
	}
	e.SavedSchemaBytes = e.DirectSchemaBytes - e.SchemaBytes
	if a.Engine != nil {
		e.CatalogTools = a.Engine.Allowed().Len()
	}
	return e
}

// transcriptView is msgs without the fields only a provider reads back.
func transcriptView(msgs []llm.Message) []TranscriptMessage {
	out := make([]TranscriptMessage, 0, len(msgs))
	for _, m := range msgs {
		tm := TranscriptMessage{Role: m.Role, Parts: []TranscriptPart{}}
		for _, p := range m.Parts {
			if p.Kind == llm.KindReasoning && p.Text == "" {
				continue // an opaque reasoning block: nothing to read
			}
			tm.Parts = append(tm.Parts, TranscriptPart{Kind: p.Kind, Text: p.Text, ImageURL: p.ImageURL,
				CallID: p.CallID, Name: p.Name, Args: string(p.Args), IsError: p.IsError})
		}
		out = append(out, tm)
	}
	return out
}

// tokenjuiceMarker is the line tokenjuice ends a compacted result with: "[tokenjuice: compacted
// 12,345→1,234 chars]" (or "…→1,234; tokenjuice_raw <handle>]").
var tokenjuiceMarker = regexp.MustCompile(`\[tokenjuice: compacted ([0-9][0-9,]*)→([0-9][0-9,]*)[ ;\]]`)

// tokenjuiceSavings reads the compaction markers of a transcript's tool results.
func tokenjuiceSavings(msgs []llm.Message) TokenjuiceSavings {
	var s TokenjuiceSavings
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind != llm.KindToolResult || !strings.Contains(p.Text, "[tokenjuice: compacted ") {
				continue
			}
			sub := tokenjuiceMarker.FindAllStringSubmatch(p.Text, -1)
			if len(sub) == 0 {
				continue
			}
			last := sub[len(sub)-1] // the marker ends the text; an earlier match is output
			raw, err1 := strconv.ParseInt(strings.ReplaceAll(last[1], ",", ""), 10, 64)
			compact, err2 := strconv.ParseInt(strings.ReplaceAll(last[2], ",", ""), 10, 64)
			if err1 != nil || err2 != nil || compact > raw {
				continue
			}
			s.Results++
			s.RawChars += raw
			s.CompactChars += compact
		}
	}
	s.SavedChars = s.RawChars - s.CompactChars
	return s
}
