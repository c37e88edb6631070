package openaichat

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// details merges the reasoning_details deltas of an OpenRouter stream into the array a whole
// completion would have held. A stream sends each detail in pieces that share its `index`: the
// pieces' text, summary and data concatenate, any other field takes its last non-null value,
// and keys keep the order they first came in. Details without an index stay as they came.
type details struct {
	cumulative bool // Quirks.DetailsCumulative
	items      []*detail
	// byIndex finds a detail by its index (compacted JSON): a stream may send many details,
	// and a search through them per piece would be quadratic.
	byIndex map[string]*detail
}

type detail struct {
	keys     []string
	vals     map[string]json.RawMessage
	concat   map[string]*strings.Builder
	seenNull map[string]bool
}

// concatenated are the fields that a stream sends in pieces.
func concatenated(key string) bool { return key == "text" || key == "summary" || key == "data" }

// add takes one chunk's reasoning_details array and returns the reasoning text it carries.
func (d *details) add(raw json.RawMessage) (string, error) {
	if string(raw) == "null" {
		return "", nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return "", err
	}
	var text strings.Builder
	for _, item := range arr {
		fs, err := fields(item)
		if err != nil {
			return "", err
		}
		if len(fs) == 0 {
			continue
		}
		var index json.RawMessage
		for _, f := range fs {
			if f.key == "index" && string(f.val) != "null" {
				index = f.val
			}
		}
		det := d.find(index)
		typ := ""
		for _, f := range fs {
			if f.key == "type" {
				_ = json.Unmarshal(f.val, &typ)
			}
		}
		for _, f := range fs {
			if det.concat[f.key] == nil && det.vals[f.key] == nil && !det.seenNull[f.key] {
				det.keys = append(det.keys, f.key)
			}
			var s string
			if concatenated(f.key) && f.val[0] == '"' && json.Unmarshal(f.val, &s) == nil {
				b := det.concat[f.key]
				if b == nil {
					b = &strings.Builder{}
					det.concat[f.key] = b
					delete(det.vals, f.key)
				}
				if d.cumulative && b.Len() > 0 && len(s) >= b.Len() && strings.HasPrefix(s, b.String()) {
					s = s[b.Len():]
				}
				b.WriteString(s)
				if typ == "reasoning.text" && f.key == "text" || typ == "reasoning.summary" && f.key == "summary" {
					text.WriteString(s)
				}
				continue
			}
			if string(f.val) == "null" {
				det.seenNull[f.key] = true
				continue
			}
			if det.concat[f.key] == nil {
				det.vals[f.key] = f.val
			}
		}
	}
	return text.String(), nil
}

func (d *details) find(index json.RawMessage) *detail {
	if index != nil {
		if it, ok := d.byIndex[string(index)]; ok {
			return it
		}
	}
	it := &detail{vals: map[string]json.RawMessage{}, concat: map[string]*strings.Builder{}, seenNull: map[string]bool{}}
	d.items = append(d.items, it)
	if index != nil {
		if d.byIndex == nil {
			d.byIndex = map[string]*detail{}
		}
		d.byIndex[string(index)] = it
	}
	return it
}

// raw renders the merged array.
func (d *details) raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range d.items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, k := range it.keys {
			if j > 0 {
				b.WriteByte(',')
			}
			kb, _ := llm.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			switch {
			case it.concat[k] != nil:
				vb, _ := llm.Marshal(it.concat[k].String())
				b.Write(vb)
			case it.vals[k] != nil:
				b.Write(it.vals[k])
			default:
				b.WriteString("null")
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes()
}

type field struct {
	key string
	val json.RawMessage
}

// fields returns the members of a JSON object in order, compacted; none for another value.
func fields(raw json.RawMessage) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return nil, err
	} else if tok != json.Delim('{') {
		return nil, nil // not an object: nothing to merge
	}
	var fs []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		fs = append(fs, field{key, c.Bytes()})
	}
	return fs, nil
}

// detailsText is the reasoning text of a whole reasoning_details array.
func detailsText(raw json.RawMessage) string {
	var d details
	t, _ := d.add(raw)
	return t
}
