package results

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Cookies of the HdrHistogram encodings (Java's AbstractHistogram). The
// low nibble's 0xf0 bits of an uncompressed V1 cookie carry the word size.
const (
	v1Encoding   = 0x1c849301
	v1Compressed = 0x1c849302
	v2Compressed = 0x1c849304
)

// ReadHistogramLog reads an HdrHistogram interval log (Java's
// HistogramLogWriter, as YCSB writes it) and returns all its intervals
// merged into one latency histogram. It reads the V2 encoding, and the V1
// encoding of HdrHistogram 2.1.4 (the version YCSB 0.17.0 ships), which
// the Go library does not.
func ReadHistogramLog(log []byte) (*hdr.Histogram, int, error) {
	sum := NewHistogram()
	intervals := 0
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"`) {
			continue
		}
		fields := strings.Split(line, ",")
		enc := fields[len(fields)-1]
		if i := strings.Index(enc, "HIST"); i >= 0 {
			enc = enc[i:]
		}
		raw, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, intervals, fmt.Errorf("interval %d: %w", intervals+1, err)
		}
		h, err := DecodeJavaHistogram(raw)
		if err != nil {
			return nil, intervals, fmt.Errorf("interval %d: %w", intervals+1, err)
		}
		if dropped := sum.Merge(h); dropped > 0 {
			return nil, intervals, fmt.Errorf("interval %d: %d values outside 1 µs .. 1 h", intervals+1, dropped)
		}
		intervals++
	}
	return sum, intervals, sc.Err()
}

// DecodeJavaHistogram decodes a compressed histogram in the V2 or V1 encoding.
func DecodeJavaHistogram(raw []byte) (*hdr.Histogram, error) {
	if len(raw) < 8 {
		return nil, errors.New("histogram encoding too short")
	}
	switch binary.BigEndian.Uint32(raw) &^ 0xf0 {
	case v2Compressed:
		// hdrhistogram-go decodes the base64 text, not its bytes.
		return hdr.Decode([]byte(base64.StdEncoding.EncodeToString(raw)))
	case v1Compressed:
		return decodeV1(raw)
	default:
		return nil, fmt.Errorf("unknown histogram encoding cookie %#x", binary.BigEndian.Uint32(raw))
	}
}

// decodeV1: [cookie][compressed length][zlib: 40-byte header, then counts
// as big-endian words of the size the inner cookie names].
func decodeV1(raw []byte) (*hdr.Histogram, error) {
	n := binary.BigEndian.Uint32(raw[4:8])
	if int(n) > len(raw)-8 {
		return nil, errors.New("V1 histogram: truncated")
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return nil, fmt.Errorf("V1 histogram: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("V1 histogram: %w", err)
	}
	if len(body) < 40 {
		return nil, errors.New("V1 histogram: header too short")
	}
	cookie := binary.BigEndian.Uint32(body)
	if cookie&^0xf0 != v1Encoding {
		return nil, fmt.Errorf("V1 histogram: inner cookie %#x", cookie)
	}
	word := int((cookie & 0xf0) >> 4 & 0xe)
	payload := int(binary.BigEndian.Uint32(body[4:]))
	digits := int(binary.BigEndian.Uint32(body[12:]))
	lowest := int64(binary.BigEndian.Uint64(body[16:]))
	highest := int64(binary.BigEndian.Uint64(body[24:]))
	if word != 2 && word != 4 && word != 8 {
		return nil, fmt.Errorf("V1 histogram: word size %d", word)
	}
	if binary.BigEndian.Uint32(body[8:]) != 0 {
		return nil, errors.New("V1 histogram: shifted (normalizing offset) histograms are not supported")
	}
	if 40+payload > len(body) || digits < 1 || digits > 5 || lowest < 1 || highest < 2*lowest {
		return nil, errors.New("V1 histogram: inconsistent header")
	}
	// Java's auto-resizing histograms record from 1 with a growing top,
	// and may carry more counts than the header's range lays out (the
	// range lags the resized array). An index's value depends on the
	// lowest value and the digits only, so the same layout with a top
	// high enough for every count holds them index by index.
	top := max(highest, 2*lowest)
	words := payload / word
	counts := make([]int64, len(hdr.New(lowest, top, digits).Export().Counts))
	for len(counts) < words && top < math.MaxInt64/2 {
		top *= 2
		counts = make([]int64, len(hdr.New(lowest, top, digits).Export().Counts))
	}
	p := body[40 : 40+payload]
	for i := 0; i*word < len(p); i++ {
		var c int64
		switch word {
		case 2:
			c = int64(int16(binary.BigEndian.Uint16(p[i*2:])))
		case 4:
			c = int64(int32(binary.BigEndian.Uint32(p[i*4:])))
		default:
			c = int64(binary.BigEndian.Uint64(p[i*8:]))
		}
		if c == 0 {
			continue
		}
		if c < 0 || i >= len(counts) {
			return nil, fmt.Errorf("V1 histogram: count %d at index %d outside the layout", c, i)
		}
		counts[i] = c
	}
	h := hdr.Import(&hdr.Snapshot{LowestTrackableValue: lowest, HighestTrackableValue: top,
		SignificantFigures: int64(digits), Counts: counts})
	if h == nil || h.TotalCount() < 0 || math.IsNaN(h.Mean()) {
		return nil, errors.New("V1 histogram: counts do not fit")
	}
	return h, nil
}
