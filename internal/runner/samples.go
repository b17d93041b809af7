package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dbperf-io/dbperf-operator/workloads"
)

// How long the runner keeps reading a sample stream after the tool
// exited: until nothing arrived for sampleQuiet, and sampleDrainMax at
// most, before it gives up on whatever still holds the pipe open (a
// process the tool started that escaped its process group). Variables, so
// that tests can shorten them.
var (
	sampleQuiet    = 5 * time.Second
	sampleDrainMax = 30 * time.Second
)

// maxSampleLine bounds a line of the sample stream; longer ones are skipped.
const maxSampleLine = 1 << 20

// sampleStream reads a tool's sample stream, a named pipe, while the tool
// runs, and hands each line to a sink. The runner holds a write end of its
// own until the tool has exited, so that the reader neither blocks on
// opening nor sees the end of the stream before the tool opened it: a
// tool that never opens the pipe (it failed first) leaves an empty stream,
// never a hung runner, and a tool that opens and closes it several times
// loses nothing.
type sampleStream struct {
	path    string
	r, w    *os.File
	sink    workloads.SampleSink
	done    chan struct{}
	read    atomic.Int64 // bytes
	skipped int64
	err     error
}

// startSampleStream makes the named pipe at path (replacing a stale file)
// and starts reading it.
func startSampleStream(path string, sink workloads.SampleSink) (*sampleStream, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("while making the named pipe %s: %w", path, err)
	}
	// Non-blocking opens: a FIFO's read end opens at once, and its write
	// end then finds a reader.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	s := &sampleStream{path: path, r: r, w: w, sink: sink, done: make(chan struct{})}
	go s.consume()
	return s, nil
}

func (s *sampleStream) consume() {
	defer close(s.done)
	br := bufio.NewReaderSize(countingReader{s.r, &s.read}, maxSampleLine)
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping {
				s.skipped++
			}
			skipping = true
			continue
		case skipping:
			skipping = false
		default:
			if line = bytes.TrimSpace(line); len(line) > 0 {
				s.sink.Line(line)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, os.ErrClosed) {
				s.err = err
			}
			return
		}
	}
}

// finish is called once the tool has exited: it closes the runner's write
// end and reads what is left, giving up after sampleQuiet without progress
// or after sampleDrainMax in all. It returns warnings about the stream.
func (s *sampleStream) finish() []string {
	_ = s.w.Close()
	var warnings []string
	if why := s.drain(); why != "" {
		warnings = append(warnings, fmt.Sprintf("the sample stream %s %s after the tool exited: a process it started may hold it; what arrived until then is used", s.path, why))
	}
	_ = s.r.Close()
	_ = os.Remove(s.path)
	if s.err != nil {
		warnings = append(warnings, fmt.Sprintf("reading the sample stream: %v", s.err))
	}
	if s.skipped > 0 {
		warnings = append(warnings, fmt.Sprintf("%d lines of the sample stream longer than %d bytes were skipped", s.skipped, maxSampleLine))
	}
	return warnings
}

// drain waits for the reader to reach the end of the stream. When it does
// not, it stops the reader and says why.
func (s *sampleStream) drain() string {
	last := s.read.Load()
	quiet := time.NewTicker(sampleQuiet)
	defer quiet.Stop()
	limit := time.NewTimer(sampleDrainMax)
	defer limit.Stop()
	why := ""
	for why == "" {
		select {
		case <-s.done:
			return ""
		case <-quiet.C:
			if n := s.read.Load(); n != last {
				last = n
				continue
			}
			why = fmt.Sprintf("stayed open with nothing arriving %s", sampleQuiet)
		case <-limit.C:
			why = fmt.Sprintf("was still being written %s", sampleDrainMax)
		}
	}
	// A deadline wakes the blocked read; closing the file does too, when
	// a deadline cannot be set.
	if err := s.r.SetReadDeadline(time.Now()); err != nil {
		_ = s.r.Close()
	}
	<-s.done
	return why
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// inToolAggregation is a tool aggregating its own samples
// (workloads.ToolAggregator) into file, run with command.
type inToolAggregation struct {
	agg     workloads.ToolAggregator
	command []string
	file    string
}

// aggregateInTool is the tool's own aggregation when its parser and its
// build can and the stream is not asked for; nil otherwise.
func (o Options) aggregateInTool() *inToolAggregation {
	ta, ok := o.Parser.(workloads.ToolAggregator)
	if o.SampleStream == "" || o.Prepare || o.SamplesFromStreamOnly || !ok || len(o.Command) == 0 {
		return nil
	}
	command, file, ok := ta.AggregateInTool(o.Command, o.SampleStream)
	if !ok {
		return nil
	}
	_ = os.Remove(file) // a stale one is not this run's
	return &inToolAggregation{agg: ta, command: command, file: file}
}

// load reads what the tool aggregated, once it has exited: its sink, or
// nil and why there is none.
func (a *inToolAggregation) load(o workloads.SampleOptions) (workloads.SampleSink, []string) {
	sink, err := a.agg.LoadAggregate(a.file, o)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("the tool wrote no %s (it was killed, or failed before its end)", a.file)
		}
		return nil, []string{fmt.Sprintf("the per-operation figures, histograms and time series of the tool's samples are missing: %v", err)}
	}
	_ = os.Remove(a.file)
	return sink, nil
}
