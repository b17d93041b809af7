package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var plain, pairs bytes.Buffer
	if err := write(&plain, ""); err != nil {
		t.Fatal(err)
	}
	if err := write(&pairs, "registry.internal:5000/mirror"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	for _, want := range []string{"postgres:17", "mysql:8.4", "clickhouse/clickhouse-keeper:25.8", "ghcr.io/dbperf-io/dbperf-runner:"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("no %s in\n%s", want, plain.String())
		}
	}
	if !strings.Contains(pairs.String(), "postgres:17 registry.internal:5000/mirror/library/postgres:17\n") {
		t.Errorf("pairs:\n%s", pairs.String())
	}
	if n := strings.Count(pairs.String(), "\n"); n != len(lines) {
		t.Errorf("%d pairs for %d images", n, len(lines))
	}
	if err := write(&pairs, "mirror"); err == nil {
		t.Error("a registry without a host accepted")
	}
}
