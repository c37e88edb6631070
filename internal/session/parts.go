package session

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/jsonscan"
	"github.com/nodmix/nodmix/internal/llm"
)

// The stored form of a message's parts, for stores that keep a transcript as rows: a JSON array
// of llm.Part objects with the field names of llm.Part, written so that every byte survives.
// encoding/json cannot be used to write it: it compacts and HTML-escapes a RawMessage, and
// replaces invalid UTF-8 in strings, while a reasoning block's signature must go back to its
// provider exactly as it came. So:
//
//   - Args, Raw and Meta are written verbatim when they are one valid JSON value in valid UTF-8
//     with no surrounding space, which is what providers send; decoding a JSON value into a
//     RawMessage keeps its exact bytes.
//   - Any other bytes (invalid JSON a model produced, a string with invalid UTF-8) go as base64
//     under the field name with a "_b64" suffix.
//
// The result is always valid UTF-8 JSON, so it fits a TEXT column and sqlite's json functions.

// EncodeParts appends the stored form of parts to dst.
func EncodeParts(dst []byte, parts []llm.Part) []byte {
	dst = append(dst, '[')
	for i := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		p := &parts[i]
		e := objWriter{buf: append(dst, '{')}
		e.str("kind", string(p.Kind))
		e.str("text", p.Text)
		e.str("image_url", p.ImageURL)
		e.str("call_id", p.CallID)
		e.str("name", p.Name)
		e.raw("args", p.Args)
		if p.IsError {
			e.key("is_error")
			e.buf = append(e.buf, "true"...)
		}
		e.str("dialect", p.Dialect)
		e.str("provider", p.Provider)
		e.raw("raw", p.Raw)
		e.raw("meta", p.Meta)
		dst = append(e.buf, '}')
	}
	return append(dst, ']')
}

// storedPart is what DecodeParts reads; the _b64 fields are the fallbacks EncodeParts writes.
type storedPart struct {
	Kind        string          `json:"kind"`
	KindB64     []byte          `json:"kind_b64"`
	Text        string          `json:"text"`
	TextB64     []byte          `json:"text_b64"`
	ImageURL    string          `json:"image_url"`
	ImageURLB64 []byte          `json:"image_url_b64"`
	CallID      string          `json:"call_id"`
	CallIDB64   []byte          `json:"call_id_b64"`
	Name        string          `json:"name"`
	NameB64     []byte          `json:"name_b64"`
	Args        json.RawMessage `json:"args"`
	ArgsB64     []byte          `json:"args_b64"`
	IsError     bool            `json:"is_error"`
	Dialect     string          `json:"dialect"`
	DialectB64  []byte          `json:"dialect_b64"`
	Provider    string          `json:"provider"`
	ProviderB64 []byte          `json:"provider_b64"`
	Raw         json.RawMessage `json:"raw"`
	RawB64      []byte          `json:"raw_b64"`
	Meta        json.RawMessage `json:"meta"`
	MetaB64     []byte          `json:"meta_b64"`
}

// DecodeParts reads what EncodeParts wrote. An empty array gives nil.
//
// Every turn reads the whole transcript, so the form EncodeParts writes is read by a decoder
// of its own (decodePartsFast); anything else, damaged rows included, goes to encoding/json,
// which alone decides what such bytes mean and what error they give.
func DecodeParts(data []byte) ([]llm.Part, error) {
	if parts, ok := decodePartsFast(data); ok {
		return parts, nil
	}
	return decodePartsReference(data)
}

// decodePartsReference is DecodeParts by encoding/json: the meaning of the stored form.
func decodePartsReference(data []byte) ([]llm.Part, error) {
	var sp []storedPart
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("stored message parts: %w", err)
	}
	if len(sp) == 0 {
		return nil, nil
	}
	out := make([]llm.Part, len(sp))
	for i := range sp {
		out[i] = sp[i].part()
	}
	return out, nil
}

// part resolves the _b64 fallbacks; both decoders end here, so they cannot differ in it.
func (s *storedPart) part() llm.Part {
	return llm.Part{
		Kind:     llm.Kind(orB64(s.Kind, s.KindB64)),
		Text:     orB64(s.Text, s.TextB64),
		ImageURL: orB64(s.ImageURL, s.ImageURLB64),
		CallID:   orB64(s.CallID, s.CallIDB64),
		Name:     orB64(s.Name, s.NameB64),
		Args:     rawOrB64(s.Args, s.ArgsB64),
		IsError:  s.IsError,
		Dialect:  orB64(s.Dialect, s.DialectB64),
		Provider: orB64(s.Provider, s.ProviderB64),
		Raw:      rawOrB64(s.Raw, s.RawB64),
		Meta:     rawOrB64(s.Meta, s.MetaB64),
	}
}

func orB64(s string, b []byte) string {
	if b != nil {
		return string(b)
	}
	return s
}

func rawOrB64(r json.RawMessage, b []byte) json.RawMessage {
	if len(b) > 0 {
		return b
	}
	if len(r) == 0 {
		return nil
	}
	return r
}

// objWriter writes the members of one JSON object, skipping empty values.
type objWriter struct {
	buf   []byte
	count int
}

func (e *objWriter) key(k string) {
	if e.count > 0 {
		e.buf = append(e.buf, ',')
	}
	e.count++
	e.buf = append(e.buf, '"')
	e.buf = append(e.buf, k...)
	e.buf = append(e.buf, '"', ':')
}

func (e *objWriter) str(k, v string) {
	if v == "" {
		return
	}
	if !utf8.ValidString(v) {
		e.b64(k, []byte(v))
		return
	}
	e.key(k)
	e.buf = appendString(e.buf, v)
}

func (e *objWriter) raw(k string, v []byte) {
	if len(v) == 0 {
		return
	}
	if !verbatim(v) {
		e.b64(k, v)
		return
	}
	e.key(k)
	e.buf = append(e.buf, v...)
}

func (e *objWriter) b64(k string, v []byte) {
	e.key(k + "_b64")
	e.buf = append(e.buf, '"')
	e.buf = base64.StdEncoding.AppendEncode(e.buf, v)
	e.buf = append(e.buf, '"')
}

// verbatim reports whether v can be written as it is and read back byte for byte.
func verbatim(v []byte) bool {
	if isSpace(v[0]) || isSpace(v[len(v)-1]) {
		return false
	}
	return utf8.Valid(v) && jsonscan.Valid(v)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// appendString appends s, valid UTF-8, as a JSON string. Only what JSON requires is escaped:
// '<', '>' and '&' stay as they are.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
