package results

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
)

// The runner ends its log with the full Result between these two lines, as
// gzip-compressed JSON in base64 lines of 76 characters. A log reader finds
// the last complete block, so tool output that happens to contain a marker
// cannot fool it.
const (
	BlockBegin = "----- BEGIN DBPERF RESULT v1 gzip+base64 -----"
	BlockEnd   = "----- END DBPERF RESULT -----"
)

// ErrNoBlock is returned when a log holds no complete result block.
var ErrNoBlock = errors.New("no complete result block in the log")

// EncodeBlock renders a result as the block the runner prints.
func EncodeBlock(r *Result) ([]byte, error) {
	packed, err := Pack(r)
	if err != nil {
		return nil, err
	}
	enc := base64.StdEncoding.EncodeToString(packed)
	var out bytes.Buffer
	out.WriteString(BlockBegin + "\n")
	for len(enc) > 76 {
		out.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	if enc != "" {
		out.WriteString(enc + "\n")
	}
	out.WriteString(BlockEnd + "\n")
	return out.Bytes(), nil
}

// DecodeBlock finds the last complete result block in a log and decodes it.
func DecodeBlock(log []byte) (*Result, error) {
	end := bytes.LastIndex(log, []byte(BlockEnd))
	if end < 0 {
		return nil, ErrNoBlock
	}
	begin := bytes.LastIndex(log[:end], []byte(BlockBegin))
	if begin < 0 {
		return nil, ErrNoBlock
	}
	body := log[begin+len(BlockBegin) : end]
	body = bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, body)
	zipped, err := base64.StdEncoding.DecodeString(string(body))
	if err != nil {
		return nil, fmt.Errorf("while decoding the result block: %w", err)
	}
	return Unpack(zipped)
}
