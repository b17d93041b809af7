package disturb

import (
	"errors"
	"strconv"
	"strings"
)

// splitCommand splits a Valkey command as valkey-cli reads a line: words
// separated by spaces; a double-quoted word takes the escapes \" \\ \n \r
// \t \b \a and \xHH; a single-quoted word is literal but for \'; a quoted
// word must end at a space or the line's end. So `EVAL "return
// redis.call('PING')" 0` is three words.
func splitCommand(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	s := []rune(line)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words, in = append(words, cur.String()), false
				cur.Reset()
			}
		case (c == '"' || c == '\'') && !in:
			in = true
			j, err := quoted(s, i, &cur)
			if err != nil {
				return nil, err
			}
			if j+1 < len(s) && !strings.ContainsRune(" \t\n\r", s[j+1]) {
				return nil, errors.New("a closing quote must be followed by a space or the end of the command")
			}
			i = j
		default:
			in = true
			cur.WriteRune(c)
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// quoted reads the quoted word opening at s[i] into cur and returns the
// index of its closing quote.
func quoted(s []rune, i int, cur *strings.Builder) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == q:
			return j, nil
		case c == '\\' && j+1 < len(s) && q == '\'':
			if s[j+1] == '\'' {
				cur.WriteRune('\'')
				j++
			} else {
				cur.WriteRune(c)
			}
		case c == '\\' && j+1 < len(s):
			j++
			switch e := s[j]; e {
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case 't':
				cur.WriteByte('\t')
			case 'b':
				cur.WriteByte('\b')
			case 'a':
				cur.WriteByte('\a')
			case 'x':
				if j+2 < len(s) {
					if v, err := strconv.ParseUint(string(s[j+1:j+3]), 16, 8); err == nil {
						cur.WriteByte(byte(v))
						j += 2
						continue
					}
				}
				cur.WriteRune(e)
			default:
				cur.WriteRune(e)
			}
		default:
			cur.WriteRune(c)
		}
	}
	return 0, errors.New("unbalanced quotes")
}
