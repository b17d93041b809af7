package k6

import (
	"encoding/json"
	"strconv"
	"time"
)

// sampleLine is one line of k6's JSON output (--out json), read without
// reflection or allocation on the common path: a Point
// {"metric":"http_reqs","type":"Point","data":{"time":"…","value":1,"tags":{…}}}
// or a Metric {"type":"Metric","data":{"name":…,"type":"trend","contains":"time",…},"metric":…}.
// Byte slices point into the line (or into scratch when a string had
// escapes) and are valid until the next line.
type sampleLine struct {
	kind, metric          []byte
	time                  []byte
	value                 float64
	name, group, scenario []byte
	// Of a Metric line.
	metricType, contains []byte
}

type scanner struct {
	b       []byte
	i       int
	scratch [][]byte
}

// parseLine reads a line into l; false when it is not a JSON object of
// the expected shape.
func (s *scanner) parseLine(b []byte, l *sampleLine) bool {
	*l = sampleLine{}
	s.b, s.i = b, 0
	s.scratch = s.scratch[:0]
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.str(&l.kind)
		case "metric":
			return s.str(&l.metric)
		case "data":
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "time":
					return s.str(&l.time)
				case "value":
					return s.number(&l.value)
				case "tags":
					return s.tags(l)
				case "name":
					return s.str(&l.metric)
				case "type":
					return s.str(&l.metricType)
				case "contains":
					return s.str(&l.contains)
				}
				return s.skip()
			})
		}
		return s.skip()
	})
}

func (s *scanner) tags(l *sampleLine) bool {
	if s.literal("null") {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return s.str(&l.name)
		case "group":
			return s.str(&l.group)
		case "scenario":
			return s.str(&l.scenario)
		}
		return s.skip()
	})
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// object reads {"key": value, ...}, calling member for each key with the
// scanner before its value; member must read the value.
func (s *scanner) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		var key []byte
		if !s.str(&key) || s.peek() != ':' {
			return false
		}
		s.i++
		if !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string; one with escapes is decoded into scratch.
func (s *scanner) str(out *[]byte) bool {
	if s.peek() != '"' {
		return false
	}
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i += 2
			continue
		case '"':
			s.i++
			if !escaped {
				*out = s.b[start+1 : s.i-1]
				return true
			}
			var v string
			if json.Unmarshal(s.b[start:s.i], &v) != nil {
				return false
			}
			s.scratch = append(s.scratch, []byte(v))
			*out = s.scratch[len(s.scratch)-1]
			return true
		}
		s.i++
	}
	return false
}

func (s *scanner) number(out *float64) bool {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	v, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	*out = v
	return err == nil
}

func (s *scanner) literal(lit string) bool {
	s.ws()
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// skip skips any value.
func (s *scanner) skip() bool {
	switch c := s.peek(); c {
	case '"':
		var b []byte
		return s.str(&b)
	case '{':
		return s.object(func([]byte) bool { return s.skip() })
	case '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip() {
				return false
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		var f float64
		return s.number(&f)
	}
}

// timeCache parses k6's RFC 3339 times, reusing the last whole second:
// samples come thousands a second, within few distinct seconds.
type timeCache struct {
	prefix []byte // up to the fraction, plus the zone
	sec    time.Time
}

func (c *timeCache) parse(b []byte) (time.Time, bool) {
	// 2006-01-02T15:04:05[.fraction](Z|±hh:mm)
	if len(b) < 20 {
		return time.Time{}, false
	}
	whole := b[:19]
	frac := 0
	rest := b[19:]
	nanos := int64(0)
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			if frac < 9 {
				nanos = nanos*10 + int64(rest[i]-'0')
				frac++
			}
			i++
		}
		rest = rest[i:]
	}
	for ; frac < 9; frac++ {
		nanos *= 10
	}
	if len(c.prefix) != len(whole)+len(rest) || string(c.prefix[:19]) != string(whole) || string(c.prefix[19:]) != string(rest) {
		t, err := time.Parse(time.RFC3339, string(whole)+string(rest))
		if err != nil {
			return time.Time{}, false
		}
		c.prefix = append(append(c.prefix[:0], whole...), rest...)
		c.sec = t
	}
	return c.sec.Add(time.Duration(nanos)), true
}
