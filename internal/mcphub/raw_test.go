package mcphub

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawHandler answers one message of a raw server: the result to send back (nil: no answer).
// initialize gets a default answer (tools with listChanged) when the handler returns nil.
type rawHandler func(p *rawPeer, method string, id, params json.RawMessage) any

// rawPeer is the server's side of a raw connection: what it writes reaches the hub's reader.
type rawPeer struct {
	mu sync.Mutex
	w  io.Writer
	// answers, if a handler sets it (handlers run on the goroutine that reads), gets each line
	// the hub writes that is not a request: its answers to the server's requests.
	answers chan<- string
}

// send writes one message as a line.
func (p *rawPeer) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	_ = p.line(string(b))
}

// line writes text and a newline as they are; the error is the hub's closing of the connection.
func (p *rawPeer) line(s string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := io.WriteString(p.w, s+"\n")
	return err
}

// rawTransport is a stdio server written by hand, for what no SDK server would do: it speaks
// JSON lines to the hub's own stdio connection (streamConn) through pipes. Its goroutine ends
// when the hub closes the connection; wg waits for it.
type rawTransport struct {
	handle  rawHandler
	wg      *sync.WaitGroup
	leftOut func([]string) // the downstream's, as dialConfig gives it
}

func (t rawTransport) Connect(context.Context) (mcp.Connection, error) {
	toClientR, toClientW := io.Pipe()
	toServerR, toServerW := io.Pipe()
	p := &rawPeer{w: toClientW}
	t.wg.Go(func() {
		defer toClientW.Close()
		sc := bufio.NewScanner(toServerR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" {
				if p.answers != nil {
					p.answers <- sc.Text()
				}
				continue // a response of the hub's
			}
			res := t.handle(p, m.Method, m.ID, m.Params)
			if res == nil && m.Method == "initialize" {
				var in struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				_ = json.Unmarshal(m.Params, &in)
				res = map[string]any{"protocolVersion": in.ProtocolVersion,
					"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
					"serverInfo":   map[string]any{"name": "raw", "version": "1"}}
			}
			if res != nil && m.ID != nil {
				p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
			}
		}
		_ = toServerR.Close()
	})
	c := newStreamConn(toClientR, toServerW, closerFunc(func() error {
		_ = toServerW.Close()
		return toClientR.Close()
	}))
	c.leftOut = t.leftOut
	return c, nil
}
