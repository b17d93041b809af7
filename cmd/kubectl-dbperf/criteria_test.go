package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// The compare flags take what a BenchmarkComparison's criteria take: an
// unknown correction used to mean no correction at all, silently.
func TestCompareRefusesBadCriteria(t *testing.T) {
	a, b := exported(t, "a", 25210, 100), exported(t, "b", 54753, 100)
	cases := map[string]struct {
		flags []string
		want  string
	}{
		"unknown correction":     {[]string{"--correction", "Bonferroni"}, "--correction"},
		"alpha 0.5":              {[]string{"--alpha", "0.5"}, "--alpha"},
		"alpha 0":                {[]string{"--alpha", "0"}, "--alpha"},
		"min effect above 100 %": {[]string{"--min-effect", "150"}, "--min-effect"},
		"negative max cv":        {[]string{"--max-cv", "-1"}, "--max-cv"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"compare", "--from-file", a, "--from-file", b}, tc.flags...)
			err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v, want a usage error naming %s", tc.flags, err, tc.want)
			}
		})
	}
	t.Run("fractional percents and every correction are fine", func(t *testing.T) {
		for _, c := range []string{"Holm", "BenjaminiHochberg", "None"} {
			args := []string{"compare", "--from-file", a, "--from-file", b, "--correction", c, "--alpha", "0.01", "--min-effect", "2.5"}
			if err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
				t.Errorf("--correction %s: %v", c, err)
			}
		}
	})
}
