package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// member is one key of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// splitObject returns the members of a JSON object in order, or ok=false when raw is not an object.
func splitObject(raw []byte) (ms []member, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, false, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, err
		}
		ms = append(ms, member{key, v})
	}
	return ms, true, nil
}

func joinObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// MergePatch applies an RFC 7396 JSON merge patch to the JSON object doc and returns the result
// in compact form. Keys keep their place in doc; keys the patch adds come after them in the
// patch's order, so the output is deterministic (golden payloads depend on it). A null member of
// the patch deletes the key. An empty patch returns doc unchanged.
func MergePatch(doc, patch []byte) ([]byte, error) {
	if len(bytes.TrimSpace(patch)) == 0 {
		return doc, nil
	}
	out, err := merge(doc, patch)
	if err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	return out, nil
}

func merge(doc, patch []byte) ([]byte, error) {
	pm, isObj, err := splitObject(patch)
	if err != nil {
		return nil, err
	}
	if !isObj {
		var c bytes.Buffer
		if err := json.Compact(&c, patch); err != nil {
			return nil, err
		}
		return c.Bytes(), nil
	}
	dm, docObj, err := splitObject(doc)
	if err != nil {
		return nil, err
	}
	if !docObj {
		dm = nil
	}
	for _, p := range pm {
		at := -1
		for i := range dm {
			if dm[i].key == p.key {
				at = i
				break
			}
		}
		if string(bytes.TrimSpace(p.val)) == "null" {
			if at >= 0 {
				dm = append(dm[:at], dm[at+1:]...)
			}
			continue
		}
		var base []byte
		if at >= 0 {
			base = dm[at].val
		}
		v, err := merge(base, p.val)
		if err != nil {
			return nil, err
		}
		if at >= 0 {
			dm[at].val = v
		} else {
			dm = append(dm, member{p.key, v})
		}
	}
	return joinObject(dm), nil
}

// AddMissing copies the members of extra whose keys doc lacks to the end of the JSON object doc,
// in key order of the map's sorted keys: pass-through fields never override what nodmix set.
func AddMissing(doc []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return doc, nil
	}
	dm, ok, err := splitObject(doc)
	if err != nil || !ok {
		return nil, fmt.Errorf("pass-through fields: body is not a JSON object")
	}
	have := make(map[string]bool, len(dm))
	for _, m := range dm {
		have[m.key] = true
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !have[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		var c bytes.Buffer
		if err := json.Compact(&c, extra[k]); err != nil {
			return nil, fmt.Errorf("pass-through field %q: %w", k, err)
		}
		dm = append(dm, member{k, c.Bytes()})
	}
	return joinObject(dm), nil
}

// ErrorMessage extracts a human message from a provider's error body, whatever its dialect:
// {"error":{"message"}} (OpenAI, Gemini, Anthropic inside "error"), {"error":"…"} (Ollama),
// {"message":"…"}, {"detail":"…"}. It returns "" when it finds none; callers then show the status.
func ErrorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil && s != "" {
			return s
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &o) == nil && o.Message != "" {
			return o.Message
		}
	}
	if v.Message != "" {
		return v.Message
	}
	var s string
	if json.Unmarshal(v.Detail, &s) == nil {
		return s
	}
	return ""
}
