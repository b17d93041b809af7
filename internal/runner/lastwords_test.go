package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
)

// What pgbench 16 prints when the password is wrong, with the password in
// a line of the tool's own (a connection string echoed).
const pgbenchWrongPassword = `pgbench (16.4 (Debian 16.4-1.pgdg120+2))
connecting with postgresql://bench:s3cret-Pw@db:5432/tpcc
pgbench: error: connection to server at "db" (10.0.0.7), port 5432 failed: FATAL:  password authentication failed for user "bench"
pgbench: error: could not create connection for initialization
`

func TestAFailedToolIsQuotedRedacted(t *testing.T) {
	r := results.New("pgbench")
	r.Fail("the prepare step exited with code 1")
	sayLastWords(r, []byte(pgbenchWrongPassword), NewRedactor("s3cret-Pw"))
	if len(r.Reasons) != 2 {
		t.Fatalf("%q", r.Reasons)
	}
	// The line that says what failed; "could not create connection" only
	// repeats it in weaker words.
	want := `the tool said: pgbench: error: connection to server at "db" (10.0.0.7), port 5432 failed: FATAL:  password authentication failed for user "bench"`
	if r.Reasons[0] != want {
		t.Fatalf("got  %s\nwant %s", r.Reasons[0], want)
	}
	if len(r.OutputTail) != 4 || r.OutputTail[1] != "connecting with postgresql://bench:[REDACTED]@db:5432/tpcc" {
		t.Fatalf("tail %q", r.OutputTail)
	}
	for _, l := range append(r.Reasons, r.OutputTail...) {
		if strings.Contains(l, "s3cret") {
			t.Fatalf("the password leaked: %s", l)
		}
	}
}

// A parser that already quoted the error is not repeated; a result that
// did not fail gets nothing.
func TestLastWordsOnlyWhenNewAndFailed(t *testing.T) {
	r := results.New("memtier")
	r.Fail("error: authentication failed [-WRONGPASS invalid username-password pair or user is disabled.]")
	sayLastWords(r, []byte("Writing results to stdout\nerror: authentication failed [-WRONGPASS invalid username-password pair or user is disabled.]\n"), NewRedactor())
	if len(r.Reasons) != 1 {
		t.Fatalf("repeated: %q", r.Reasons)
	}
	ok := results.New("memtier")
	sayLastWords(ok, []byte("error: something the tool survived\n"), NewRedactor())
	if len(ok.Reasons) != 0 || ok.OutputTail != nil {
		t.Fatalf("%+v", ok)
	}
}

// Java's stack frames are not what the tool said; the exception is.
func TestLastWordsSkipStackFrames(t *testing.T) {
	out := `Loading workload...
Exception in thread "main" com.mongodb.MongoSecurityException: Exception authenticating MongoCredential{mechanism=SCRAM-SHA-256, userName='ycsb', source='admin', password=<hidden>}
	at com.mongodb.internal.connection.SaslAuthenticator.wrapException(SaslAuthenticator.java:205)
	at com.mongodb.internal.connection.SaslAuthenticator.getNextSaslResponse(SaslAuthenticator.java:122)
Caused by: com.mongodb.MongoCommandException: Command failed with error 18 (AuthenticationFailed): 'Authentication failed' on server 127.0.0.1:27017.
	at com.mongodb.internal.connection.ProtocolHelper.getCommandFailureException(ProtocolHelper.java:198)
	... 12 more
`
	r := results.New("ycsb")
	r.Fail("YCSB printed no results")
	sayLastWords(r, []byte(out), NewRedactor())
	if got := r.Reasons[0]; !strings.Contains(got, "MongoSecurityException: Exception authenticating") || !strings.Contains(got, "(AuthenticationFailed): 'Authentication failed'") || strings.Contains(got, "SaslAuthenticator.java") {
		t.Fatalf("%s", got)
	}
}

// Without a line that reads as an error, the last lines are quoted.
func TestLastWordsWithoutAnErrorLine(t *testing.T) {
	r := results.New("custom")
	r.Fail("the tool exited with code 2")
	sayLastWords(r, []byte("step 1\nstep 2\nstep 3\nstep 4\n"), NewRedactor())
	if r.Reasons[0] != `the tool said: step 2 | step 3 | step 4` {
		t.Fatalf("%s", r.Reasons[0])
	}
}

// A tail whose start was dropped begins at a whole line: the end of a
// secret cut in two is not quoted.
func TestTheTailStartsAtAWholeLine(t *testing.T) {
	var sink bytes.Buffer
	w := &lineWriter{out: &sink, red: NewRedactor("s3cret-Pw"), limit: 1 << 20}
	_, _ = w.Write([]byte("password=s3cret-Pw\n"))
	_, _ = w.Write(bytes.Repeat([]byte("x"), 2*tailBytes-len("Pw\n")+1)) // the cut falls inside the secret's line
	_, _ = w.Write([]byte("\nerror: boom\n"))
	end := w.end()
	if bytes.Contains(end, []byte("Pw")) || !bytes.HasSuffix(end, []byte("error: boom\n")) {
		t.Fatalf("end starts with %q", end[:min(20, len(end))])
	}
}

// Exec quotes a real failing command (sh) through the pgbench parser, as
// a prepare step.
func TestExecQuotesAFailedPrepareStep(t *testing.T) {
	var log bytes.Buffer
	r := Exec(context.Background(), Options{Parser: pgbench.Pgbench{}, Prepare: true, Stdout: &log, SecretValues: []string{"s3cret-Pw"},
		Command: []string{"sh", "-c", `echo 'pgbench: error: connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  database "tpcc" does not exist (s3cret-Pw)' >&2; exit 1`}})
	if r.Verdict != results.Failed || len(r.Reasons) != 2 || !strings.Contains(r.Reasons[0], `FATAL:  database "tpcc" does not exist ([REDACTED])`) {
		t.Fatalf("%s %q", r.Verdict, r.Reasons)
	}
}

// YCSB with a wrong password (its MongoDB binding here): the cause comes
// first, its consequences repeat per key, and the statistics at the end name
// failed operations without being errors. The cause is quoted, each
// repeated consequence once; "Error inserting" (a weaker word) not.
func TestLastWordsQuoteTheCauseOnce(t *testing.T) {
	out := `Loading workload...
Starting test.
insert user6284781860667377211: Exception authenticating MongoCredential{mechanism=SCRAM-SHA-256, userName='ycsb', source='admin', password=<hidden>}; caused by: Command failed with error 18 (AuthenticationFailed): 'Authentication failed.'
Error inserting, not retrying any more. number of attempts: 1Insertion Retry Limit: 0
insert user9105318085603802964: Connection pool for ServerId{address=127.0.0.1:39351} is paused because another operation failed
Error inserting, not retrying any more. number of attempts: 1Insertion Retry Limit: 0
insert user3232700585171816769: Connection pool for ServerId{address=127.0.0.1:39351} is paused because another operation failed
[OVERALL], RunTime(ms), 3172
[INSERT-FAILED], Operations, 10
[INSERT-FAILED], 99thPercentileLatency(us), 1630207
`
	r := results.New("ycsb")
	r.Fail("no operation (throughput 0) completed: nothing was measured")
	sayLastWords(r, []byte(out), NewRedactor())
	want := "the tool said: insert user6284781860667377211: Exception authenticating MongoCredential{mechanism=SCRAM-SHA-256, userName='ycsb', source='admin', password=<hidden>}; caused by: Command failed with error 18 (AuthenticationFailed): 'Authentication failed.' | " +
		"insert user9105318085603802964: Connection pool for ServerId{address=127.0.0.1:39351} is paused because another operation failed"
	if r.Reasons[0] != shorten(want, len(want)) {
		t.Fatalf("got  %s\nwant %s", r.Reasons[0], want)
	}
}

// A path is no error ("perf-failures" is a namespace), nor is a warning.
func TestWhatReadsAsAnError(t *testing.T) {
	for l, want := range map[string]bool{
		"Initialized new Jobs on-disk database /pods/perf-failures_hammerdb/out/hammer.DB": false,
		"WARNING: SLF4J not found on the classpath.  Logging is disabled":                  false,
		`time="2026-11-27T18:11:33Z" level=warning msg="the failure rate is high"`:         false,
		"Vuser 1:FINISHED FAILED": true,
		`connection to server at "127.0.0.1", port 5432 failed: FATAL:  password authentication failed`: true,
		"Error inserting, not retrying any more.":                                                       true,
		"ALL VIRTUAL USERS COMPLETE":                                                                    false,
	} {
		if got := readsAsError(l); got != want {
			t.Errorf("%q reads as an error: %v, want %v", l, got, want)
		}
	}
}
