package openaichat

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// content is an answer's (or a delta's) content: OpenAI's is a string, or null beside tool
// calls. Mistral's reasoning models send an array of chunks instead, `{"type":"text","text"}`
// for the answer and `{"type":"thinking","thinking":[{"type":"text","text"}]}` for reasoning,
// whole and streamed; read as a string it would be dropped, and the answer with it.
type content struct {
	text     string
	thinking string // the thinking chunks' text
}

func (c *content) UnmarshalJSON(b []byte) error {
	*c = content{}
	switch b[0] {
	case '"':
		// The common case: a plain string (the caller has checked the JSON) is its bytes.
		if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
			c.text = string(b[1 : len(b)-1])
			return nil
		}
		return json.Unmarshal(b, &c.text)
	case '[':
		var chunks []json.RawMessage
		if err := json.Unmarshal(b, &chunks); err != nil {
			return err
		}
		var text, thinking strings.Builder
		for _, raw := range chunks {
			var ch struct {
				Type     string          `json:"type"`
				Text     string          `json:"text"`
				Thinking json.RawMessage `json:"thinking"`
			}
			if json.Unmarshal(raw, &ch) != nil {
				continue // not a chunk: skipped, as a field of an unexpected type is
			}
			switch ch.Type {
			case "text":
				text.WriteString(ch.Text)
			case "thinking":
				thinkingText(&thinking, ch.Thinking)
			}
		}
		c.text, c.thinking = text.String(), thinking.String()
	}
	// null, and any other shape, holds no text (see llm.UnmarshalLoose).
	return nil
}

// thinkingText writes the text of a thinking chunk's `thinking` to b: its text chunks, or a
// plain string.
func thinkingText(b *strings.Builder, raw json.RawMessage) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b.WriteString(s)
		return
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts) // what is not text chunks holds no text to show
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(p.Text)
		}
	}
}
