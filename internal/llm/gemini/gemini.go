// Package gemini is the Google Gemini generateContent dialect (`api: "google-generative-ai"`):
// it encodes an llm.Request for the v1beta REST API and decodes its JSON and SSE answers.
package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Name is the config's `api` value for this dialect, and the Dialect stamped on the parts
// whose Meta it writes.
const Name = "google-generative-ai"

// skipSignature is the value Google documents for a function call that Gemini did not produce
// (a transcript begun on another provider): Gemini 3 refuses a current-turn call without a
// thoughtSignature, and accepts this one in its place.
const skipSignature = "skip_thought_signature_validator"

type dialect struct{}

var _ llm.Dialect = dialect{}

// New returns the Gemini dialect. It is stateless and safe for concurrent use.
func New() llm.Dialect { return dialect{} }

func (dialect) Name() string { return Name }

// Encode builds a generateContent (or streamGenerateContent?alt=sse) request. The API key is
// not part of it: the provider layer sends it in x-goog-api-key, never in the URL.
func (dialect) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	model := req.Model
	if p.Model != "" {
		model = p.Model
	}
	model = strings.TrimPrefix(model, "models/")
	if model == "" {
		return nil, errors.New("gemini: request has no model")
	}
	contents, err := encodeContents(req.Messages, signsForeignCalls(model))
	if err != nil {
		return nil, err
	}
	body := request{Contents: contents}
	if req.System != "" {
		body.SystemInstruction = &content{Parts: []part{{Text: &req.System}}}
	}
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			schema, err := parameters(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("gemini: tool %q: %w", t.Name, err)
			}
			decls[i] = functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: schema}
		}
		body.Tools = []tool{{FunctionDeclarations: decls}}
		if mode := toolMode(req.ToolChoice); mode != "" {
			body.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: mode}}
		}
	}
	var gc json.RawMessage
	if req.MaxTokens > 0 || req.Temperature != nil {
		if gc, err = llm.Marshal(&generationConfig{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature}); err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
	}
	extra, gc, err := llm.PassThrough(req.Extra, owned[:], "generationConfig", gc)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	body.GenerationConfig = gc
	b, err := llm.Marshal(&body)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if b, err = llm.AddMissing(b, extra); err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if b, err = llm.MergePatch(b, p.Body); err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	p.SetHeaders(h)
	method := ":generateContent"
	if req.Stream {
		method = ":streamGenerateContent?alt=sse"
	}
	return &llm.Encoded{Path: "/models/" + url.PathEscape(model) + method, Header: h, Body: b}, nil
}

// owned are the fields Encode decides even when it leaves them out: an Extra `tools` beside
// the run's own, or `contents`, would change what the model is asked. An Extra generationConfig
// (topK, stopSequences, …) is sent with nodmix's own members over it.
var owned = [...]string{"contents", "systemInstruction", "tools", "toolConfig"}

// signsForeignCalls reports whether the model validates thought signatures on replayed
// function calls, so that calls without one must carry skipSignature. Gemini 1.x and 2.x do
// not validate; anything newer, and the moving -latest aliases, are taken to.
func signsForeignCalls(model string) bool {
	m := strings.ToLower(model)
	return strings.HasPrefix(m, "gemini-") && !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

func toolMode(choice string) string {
	switch choice {
	case "auto":
		return "AUTO"
	case "none":
		return "NONE"
	case "required":
		return "ANY"
	}
	return ""
}

// parameters is a tool's JSON Schema as parametersJsonSchema takes it: as written, less a root
// `$schema` (a meta keyword the API has refused), and omitted for a tool without parameters.
func parameters(raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] != '{' {
		return nil, errors.New("parameters are not a JSON object")
	}
	if bytes.Contains(t, []byte(`"$schema"`)) {
		return dropRootKey(t, "$schema"), nil
	}
	return t, nil
}

// dropRootKey returns the JSON object obj without its top-level member key, members otherwise
// in their order. It scans instead of decoding: schemas are most of a request's bytes. Input
// that is not well-formed comes back unchanged, for the encoder to refuse.
func dropRootKey(obj []byte, key string) []byte {
	type member struct{ start, end int }
	var keep []member
	depth, start, dropped := 0, -1, false
	drop := false
	for i := 0; i < len(obj); i++ {
		switch c := obj[i]; c {
		case '"':
			j := stringEnd(obj, i)
			if j < 0 {
				return obj
			}
			if depth == 1 && start < 0 {
				start, drop = i, string(obj[i+1:j]) == key
			}
			i = j
		case '{', '[':
			depth++
		case '}', ']', ',':
			if c != ',' {
				depth--
			}
			if depth == 1 && c == ',' || depth == 0 {
				if start >= 0 {
					if drop {
						dropped = true
					} else {
						keep = append(keep, member{start, i})
					}
				}
				start = -1
			}
		}
	}
	if !dropped || depth != 0 {
		return obj
	}
	out := make([]byte, 0, len(obj))
	out = append(out, '{')
	for i, m := range keep {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, bytes.TrimSpace(obj[m.start:m.end])...)
	}
	return append(out, '}')
}

// stringEnd returns the index of the quote closing the JSON string that opens at i, or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// encodeContents turns the transcript into Gemini contents: assistant turns become "model"
// turns, tool results become functionResponse parts of a "user" turn (consecutive tool
// messages share one turn, as Gemini answers parallel calls in one content).
func encodeContents(msgs []llm.Message, signForeign bool) ([]content, error) {
	out := make([]content, 0, len(msgs))
	lastTool := false
	for i := range msgs {
		m := &msgs[i]
		var parts []part
		var err error
		switch m.Role {
		case llm.RoleAssistant:
			parts, err = modelParts(m, signForeign)
		case llm.RoleUser, llm.RoleTool:
			parts, err = userParts(msgs, i)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("gemini: message %d: %w", i, err)
		}
		if len(parts) == 0 {
			continue
		}
		if m.Role == llm.RoleTool && lastTool {
			last := &out[len(out)-1]
			last.Parts = append(last.Parts, parts...)
			continue
		}
		role := "user"
		if m.Role == llm.RoleAssistant {
			role = "model"
		}
		out = append(out, content{Role: role, Parts: parts})
		lastTool = m.Role == llm.RoleTool
	}
	return out, nil
}

// ownMeta returns the Gemini data on a part this dialect produced; another dialect's Meta is
// not Gemini's to send.
func ownMeta(p *llm.Part) meta {
	var m meta
	if p.Dialect == Name && len(p.Meta) > 0 {
		_ = json.Unmarshal(p.Meta, &m) // a damaged Meta is no signature, not a failed turn
	}
	return m
}

// modelParts is an assistant message as Gemini produced it: every part with its signature, in
// order. Unsigned thought summaries are dropped (Gemini reads nothing from them), as is
// another provider's reasoning.
func modelParts(m *llm.Message, signForeign bool) ([]part, error) {
	parts := make([]part, 0, len(m.Parts))
	firstCall, signed := -1, false
	for i := range m.Parts {
		p := &m.Parts[i]
		md := ownMeta(p)
		switch p.Kind {
		case llm.KindReasoning:
			if md.ThoughtSignature == "" {
				continue
			}
			parts = append(parts, part{Text: &p.Text, Thought: true, ThoughtSignature: md.ThoughtSignature})
		case llm.KindText:
			if p.Text == "" && md.ThoughtSignature == "" {
				continue
			}
			parts = append(parts, part{Text: &p.Text, ThoughtSignature: md.ThoughtSignature})
		case llm.KindToolCall:
			if firstCall < 0 {
				firstCall = len(parts)
			}
			signed = signed || md.ThoughtSignature != ""
			parts = append(parts, part{
				FunctionCall:     &functionCall{ID: md.ID, Name: p.Name, Args: llm.ObjectArgs(p.Args)},
				ThoughtSignature: md.ThoughtSignature,
			})
		case llm.KindImage:
			ip, err := imagePart(p.ImageURL)
			if err != nil {
				return nil, err
			}
			ip.ThoughtSignature = md.ThoughtSignature
			parts = append(parts, ip)
		}
	}
	if signForeign && firstCall >= 0 && !signed {
		parts[firstCall].ThoughtSignature = skipSignature
	}
	return parts, nil
}

// userParts is a user or tool message: text, images, and tool results as functionResponse
// parts named after the call they answer.
func userParts(msgs []llm.Message, at int) ([]part, error) {
	m := &msgs[at]
	parts := make([]part, 0, len(m.Parts))
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case llm.KindText:
			if p.Text != "" {
				parts = append(parts, part{Text: &p.Text})
			}
		case llm.KindImage:
			ip, err := imagePart(p.ImageURL)
			if err != nil {
				return nil, err
			}
			parts = append(parts, ip)
		case llm.KindToolResult:
			name, id := callFor(msgs, at, p.CallID)
			if p.Name != "" {
				name = p.Name
			}
			if name == "" {
				return nil, fmt.Errorf("tool result %q: no tool name and no call with that id", p.CallID)
			}
			fr := &functionResponse{ID: id, Name: name}
			if p.IsError {
				fr.Response.Error = &p.Text
			} else {
				fr.Response.Result = &p.Text
			}
			parts = append(parts, part{FunctionResponse: fr})
		}
	}
	return parts, nil
}

// callFor finds the call a result answers, in the nearest assistant message before it: its
// name, and the id Gemini gave it (if Gemini gave one; nodmix's own call_<n> ids stay local).
func callFor(msgs []llm.Message, before int, callID string) (name, id string) {
	for i := before - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleAssistant {
			continue
		}
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			if p.Kind == llm.KindToolCall && p.CallID == callID {
				return p.Name, ownMeta(p).ID
			}
		}
	}
	return "", ""
}

// imagePart sends a data URL inline and any other URL as fileData: the Files API's URIs and
// public http(s) URLs, with the media type the path's extension names when it names one.
func imagePart(u string) (part, error) {
	if strings.HasPrefix(u, "data:") {
		mt, data, err := llm.DataURL(u)
		if err != nil {
			return part{}, fmt.Errorf("image %w", err)
		}
		if mt == "" {
			return part{}, errors.New("image data URL has no media type")
		}
		return part{InlineData: &blob{MimeType: mt, Data: data}}, nil
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme == "" || pu.Host == "" {
		return part{}, errors.New("image is neither a data URL nor an absolute URL")
	}
	mt, _, _ := strings.Cut(mime.TypeByExtension(path.Ext(pu.Path)), ";")
	return part{FileData: &fileData{MimeType: mt, FileURI: u}}, nil
}
