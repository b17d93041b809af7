package runner

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"sync"
)

// Redactor replaces secret values with "[REDACTED]".
type Redactor struct {
	secrets [][]byte
}

// NewRedactor redacts the given values; empty ones are ignored, and longer
// ones are replaced first so that a secret containing another is hidden whole.
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{}
	for _, v := range values {
		if v != "" {
			r.secrets = append(r.secrets, []byte(v))
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

var redacted = []byte("[REDACTED]")

// Bytes returns b with every secret replaced.
func (r *Redactor) Bytes(b []byte) []byte {
	for _, s := range r.secrets {
		b = bytes.ReplaceAll(b, s, redacted)
	}
	return b
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string { return string(r.Bytes([]byte(s))) }

// lineWriter keeps a copy of everything written and forwards it to out line
// by line, redacted. Holding back partial lines means a secret split across
// two writes is still recognised.
type lineWriter struct {
	mu      sync.Mutex
	out     io.Writer
	red     *Redactor
	pending []byte
	copy    bytes.Buffer
	limit   int
	dropped int64
	// tail is the end of the output, at most 2×tailBytes (what a failed
	// tool said last: lastwords.go); cut once its start was dropped.
	tail []byte
	cut  bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := max(w.limit-w.copy.Len(), 0)
	w.copy.Write(p[:min(room, len(p))])
	w.dropped += int64(len(p) - min(room, len(p)))
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*tailBytes {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-tailBytes:]...)
		w.cut = true
	}
	w.pending = append(w.pending, p...)
	if i := bytes.LastIndexAny(w.pending, "\n\r"); i >= 0 {
		if _, err := w.out.Write(w.red.Bytes(w.pending[:i+1])); err != nil {
			return 0, err
		}
		w.pending = append(w.pending[:0], w.pending[i+1:]...)
	}
	if len(w.pending) > 64<<10 {
		// A very long line with no end: let it through rather than hold it.
		if _, err := w.out.Write(w.red.Bytes(w.pending)); err != nil {
			return 0, err
		}
		w.pending = w.pending[:0]
	}
	return len(p), nil
}

// Flush writes any partial last line.
func (w *lineWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	_, err := w.out.Write(w.red.Bytes(w.pending))
	w.pending = w.pending[:0]
	return err
}

// end is the end of the output, whole lines only (unredacted: lastLines
// redacts each line, and a line cut at its start could hold the end of a
// secret the redactor no longer recognises).
func (w *lineWriter) end() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	tail := w.tail
	if w.cut {
		i := bytes.IndexByte(tail, '\n')
		if i < 0 {
			return nil
		}
		tail = tail[i+1:]
	}
	return append([]byte(nil), tail...)
}

// note prints a line of the runner's own between the tool's lines, redacted
// (it may quote the tool).
func (w *lineWriter) note(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.out.Write(w.red.Bytes([]byte("[dbperf-runner] " + fmt.Sprintf(format, args...) + "\n")))
}
