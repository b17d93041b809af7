package disturb

import (
	"slices"
	"testing"
)

func TestSplitCommandAsValkeyCliDoes(t *testing.T) {
	for line, want := range map[string][]string{
		`SET k v`:                              {"SET", "k", "v"},
		`  SET   k   v  `:                      {"SET", "k", "v"},
		`EVAL "return redis.call('PING')" 0`:   {"EVAL", "return redis.call('PING')", "0"},
		`SET k "a \"quoted\" \\ word\n"`:       {"SET", "k", "a \"quoted\" \\ word\n"},
		`SET k 'it\'s literal \n'`:             {"SET", "k", `it's literal \n`},
		`SET k "\x41\x42"`:                     {"SET", "k", "AB"},
		`DEBUG SLEEP 0.5`:                      {"DEBUG", "SLEEP", "0.5"},
		`SET "" ""`:                            {"SET", "", ""},
		`EVAL "for i=1,3e7 do end return 0" 0`: {"EVAL", "for i=1,3e7 do end return 0", "0"},
		"SET k v\tEX 10":                       {"SET", "k", "v", "EX", "10"},
	} {
		got, err := splitCommand(line)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	for _, bad := range []string{`SET k "open`, `SET k 'open`, `SET k "a"b`} {
		if got, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error", bad, got)
		}
	}
}
