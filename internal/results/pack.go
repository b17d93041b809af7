package results

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
)

// maxUnpacked bounds what Gunzip inflates, so a corrupt or hostile input
// cannot exhaust memory.
const maxUnpacked = 64 << 20

// Gzip compresses b at the best compression.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
	_, _ = zw.Write(b)                                       // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

// Gunzip decompresses b, refusing more than 64 MiB of output.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxUnpacked+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxUnpacked {
		return nil, fmt.Errorf("more than %d bytes once decompressed", maxUnpacked)
	}
	return raw, nil
}

// Pack renders a result as gzip-compressed JSON, the form it takes in the
// runner's log block and in the results ConfigMap.
func Pack(r *Result) ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("while encoding the result: %w", err)
	}
	return Gzip(raw), nil
}

// Unpack reads a result that Pack rendered.
func Unpack(b []byte) (*Result, error) {
	raw, err := Gunzip(b)
	if err != nil {
		return nil, fmt.Errorf("while decompressing the result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("while reading the result: %w", err)
	}
	return &r, nil
}
