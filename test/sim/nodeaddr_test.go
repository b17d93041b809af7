package sim

import (
	"bytes"
	"os"
	"testing"
)

// TestClaimNodeAddrSkipsATakenAddress: an address another cluster (or a
// test killed before its stop) holds is skipped, never a reason to fall
// back to 127.0.0.1 (which the API server's node proxy refuses).
func TestClaimNodeAddrSkipsATakenAddress(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to add addresses to lo")
	}
	var log bytes.Buffer
	first, owned := claimNodeAddr(&log)
	if !owned {
		t.Fatalf("no address claimed: %s", log.String())
	}
	defer func() { _ = releaseNodeAddr(first) }()
	second, owned := claimNodeAddr(&log)
	if !owned || second == first {
		t.Fatalf("the second claim got %s (owned %v) beside %s: %s", second, owned, first, log.String())
	}
	_ = releaseNodeAddr(second)
}
