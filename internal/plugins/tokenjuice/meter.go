package tokenjuice

import (
	"bytes"
)

// curl and wget draw a progress meter: a header and one row per redraw that a pipe keeps as
// lines. meterStage drops the header and every row but the last of a run (its final state: the
// size and speed); text that a row was followed by on the same line ("*   Trying ...") is kept.

var (
	meterHeadRE = lazyRE(`^\s*% Total\s+% Received\s+% Xferd|^\s+Dload\s+Upload\s+Total\s+Spent`)
	meterRowRE  = lazyRE(`^\s*\d+\s+[\d.]+[kMGT]?\s+\d+\s+[\d.]+[kMGT]?\s+\d+\s+[\d.]+[kMGT]?\s+[\d.]+[kMGT]?\s+[\d.]+[kMGT]?\s+(--:--:--|[\d:]+)\s+(--:--:--|[\d:]+)\s+(--:--:--|[\d:]+)\s+[\d.]+[kMGT]?`)
)

type meterStage struct {
	next    stage
	last    []byte
	lastOff int
	held    bool
}

func (m *meterStage) line(l []byte, off int) {
	if len(l) > 0 && (l[0] == ' ' || l[0] == '%' || l[0] >= '0' && l[0] <= '9') {
		if (bytes.Contains(l, []byte("% Total")) || bytes.Contains(l, []byte("Dload"))) && meterHeadRE.Match(l) {
			return
		}
		if loc := meterRow(l); loc != nil {
			m.last, m.lastOff, m.held = append(m.last[:0], l[:loc[1]]...), off, true
			if rest := bytes.TrimSpace(l[loc[1]:]); len(rest) > 0 {
				m.next.line(rest, off)
			}
			return
		}
	}
	m.flush()
	m.next.line(l, off)
}

func (m *meterStage) flush() {
	if m.held {
		m.next.line(m.last, m.lastOff)
		m.held = false
	}
}

func (m *meterStage) end() {
	m.flush()
	m.next.end()
}

// meterRow is meterRowRE.FindIndex behind a cheap test: a row starts with a percentage, a whole
// number (log lines start with time stamps, which are not).
func meterRow(l []byte) []int {
	t := bytes.TrimLeft(l, " ")
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 3 || i >= len(t) || t[i] != ' ' || bytes.Count(l, []byte{':'}) < 4 {
		return nil
	}
	return meterRowRE.FindIndex(l)
}
