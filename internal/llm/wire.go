package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// This file holds what every dialect does the same way on the wire: JSON written as the model
// wrote it, data URLs, tool call arguments, pass-through fields and response bodies. What one
// provider does its own way stays in its dialect.

// Marshal encodes v as compact JSON without HTML escaping: model text and tool descriptions are
// full of <, > and &, and go out as written.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SetHeaders sets the patch's headers on h, each under its canonical key and replacing what h
// had there; the values are copied, so h and the patch share nothing.
func (p Patch) SetHeaders(h http.Header) {
	for k, vs := range p.Header {
		h[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
}

// DataURL reads a data URL (RFC 2397, `data:[<media type>][;base64],<data>`): its media type
// without parameters ("" when it names none) and its payload in base64, as written when the URL
// says ;base64 (it is not checked), else the percent-decoded bytes encoded. A URL without a
// comma has no payload and is an error; so is one whose percent-encoding is broken. Whether a
// missing media type is acceptable is the dialect's call.
func DataURL(u string) (mediaType, b64 string, err error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", errors.New("not a data URL")
	}
	head, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", errors.New("data URL has no data")
	}
	head, isB64 := strings.CutSuffix(head, ";base64")
	mediaType, _, _ = strings.Cut(head, ";")
	if isB64 {
		return mediaType, data, nil
	}
	raw, err := url.PathUnescape(data)
	if err != nil {
		return "", "", errors.New("data URL is not valid percent-encoding")
	}
	return mediaType, base64.StdEncoding.EncodeToString([]byte(raw)), nil
}

var emptyObject = json.RawMessage(`{}`)

// ObjectArgs is a tool call's arguments for a wire format that takes them as a JSON object
// (Anthropic's input, Gemini's args, Ollama's arguments): raw without surrounding space when it
// is one, else {}. Arguments that are not an object (a call cut short, kept by a decoder as a
// JSON string) go back as {}, so that one broken call in the history does not make every later
// request fail.
func ObjectArgs(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return emptyObject
}

// CallArgs turns the arguments text a model sent (OpenAI's `arguments` string) into Part.Args,
// which is always valid JSON: the text itself when it is a JSON object; "{}" when it is empty;
// else the text as a JSON string. No tool's parameters (an object schema) accept a string, so
// the tool call fails validation with the model's own text in view and the loop can tell the
// model so, and the call is sent back to the provider as the model wrote it (see ArgsText).
func CallArgs(text string) json.RawMessage {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	if t[0] == '{' && json.Valid(t) {
		return json.RawMessage(text)
	}
	s, _ := json.Marshal(text)
	return s
}

// ArgsText is the `arguments` string of a tool call for a wire format that takes it as text:
// the JSON object as the model sent it, or the model's own text when Args holds it as a JSON
// string (see CallArgs).
func ArgsText(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	if args[0] == '"' {
		var s string
		if json.Unmarshal(args, &s) == nil {
			return s
		}
	}
	return string(args)
}

// PassThrough returns extra without the owned fields (those the dialect decides even when it
// leaves them out), copied only when it drops some, and the value to send for member, a field
// both sides may set (Gemini's generationConfig, Ollama's options): Extra's object with ours
// merged over it, so that nodmix's own settings win. With ours nil, or member "", Extra's member
// passes through as it is.
func PassThrough(extra map[string]json.RawMessage, owned []string, member string, ours json.RawMessage) (map[string]json.RawMessage, json.RawMessage, error) {
	if len(extra) == 0 {
		return extra, ours, nil
	}
	out := extra
	drop := func(k string) {
		if len(out) == len(extra) {
			out = maps.Clone(extra)
		}
		delete(out, k)
	}
	for _, k := range owned {
		if _, ok := extra[k]; ok {
			drop(k)
		}
	}
	if theirs, ok := extra[member]; ok && member != "" && ours != nil {
		merged, err := MergePatch(theirs, ours)
		if err != nil {
			return nil, nil, fmt.Errorf("pass-through field %q: %w", member, err)
		}
		ours = merged
		drop(member)
	}
	return out, ours, nil
}

// ReadBody reads a whole (non-streamed) response body of at most max bytes: a broken or hostile
// upstream cannot make nodmix buffer more.
func ReadBody(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("response larger than %d bytes", max)
	}
	return b, nil
}

// MaxDocument bounds a non-streamed response: far above any real answer, and what a broken or
// hostile upstream can make nodmix buffer.
const MaxDocument = 64 << 20

// ReadDocument reads a non-streamed response, one JSON document, into v and returns its bytes.
// An empty body or one cut off in transit is ErrTruncated; a body over MaxDocument is refused;
// a read failure is "read response: …" and bad JSON "decode response: …". loose skips fields of
// an unexpected type (UnmarshalLoose).
func ReadDocument(r io.Reader, v any, loose bool) ([]byte, error) {
	b, err := ReadBody(r, MaxDocument)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return b, ErrTruncated
	}
	if loose {
		err = UnmarshalLoose(b, v)
	} else {
		err = json.Unmarshal(b, v)
	}
	switch {
	case err == nil:
		return b, nil
	case CutShort(err, b):
		return b, ErrTruncated
	}
	return b, fmt.Errorf("decode response: %w", err)
}

// CutShort reports whether err, from decoding the JSON document data, says only that data
// ended too soon: a response cut off in transit, which is ErrTruncated rather than bad JSON.
func CutShort(err error, data []byte) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) && se.Offset >= int64(len(data))
}

// UnmarshalLoose decodes b into v, skipping a field of an unexpected type instead of failing:
// providers vary, and what nodmix reads of a response must not fail on what it does not.
func UnmarshalLoose(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// UserContent is a user message's content for the OpenAI wire formats, whose content is a
// string or a list of typed parts: the text itself for a lone text part, else each text (empty
// ones left out) and image part as part makes it, or "" when none remains. part sees only
// KindText and KindImage parts.
func UserContent[T any](parts []Part, part func(*Part) T) any {
	if len(parts) == 1 && parts[0].Kind == KindText {
		return parts[0].Text
	}
	cs := make([]T, 0, len(parts))
	for i := range parts {
		p := &parts[i]
		if p.Kind == KindText && p.Text != "" || p.Kind == KindImage {
			cs = append(cs, part(p))
		}
	}
	if len(cs) == 0 {
		return ""
	}
	return cs
}

// SplitToolResults splits a tool message for wire formats whose tool results hold text only:
// its results in order, and its text and image parts (an image a tool returned), which follow
// the results in a user message. Other parts are left out.
func SplitToolResults(parts []Part) (results, rest []Part) {
	for _, p := range parts {
		switch p.Kind {
		case KindToolResult:
			results = append(results, p)
		case KindText, KindImage:
			rest = append(rest, p)
		}
	}
	return results, rest
}
