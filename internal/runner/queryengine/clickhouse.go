package queryengine

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// clickHouse talks to ClickHouse's HTTP interface: one POST per
// statement, the statement in the body, settings and query_id as URL
// parameters, credentials as basic authentication (which every version
// takes; the X-ClickHouse-* headers came later).
type clickHouse struct {
	t      Target
	base   string
	client *http.Client
}

func newClickHouse(t Target, tc *tls.Config) *clickHouse {
	scheme := "http"
	if tc != nil {
		scheme = "https"
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tc
	transport.MaxIdleConnsPerHost = 1
	transport.DisableCompression = true // time the bytes as the server sends them
	return &clickHouse{t: t, base: fmt.Sprintf("%s://%s/", scheme, hostPort(t.Host, t.Port)),
		client: &http.Client{Transport: transport}}
}

func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// exception is the line ClickHouse ends a 200 response with when the
// query failed after its result began streaming ("Code: 241,
// e.displayText() = DB::Exception: …" up to 19.x, "Code: 241. DB::Exception:
// …" since).
var exception = regexp.MustCompile(`^Code: [0-9]+[.,] .*(DB::Exception|e\.displayText\(\))`)

func (c *clickHouse) ServerVersion(ctx context.Context) (string, error) {
	var out bytes.Buffer
	if _, err := c.do(ctx, "SELECT version()", "", nil, &out); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

func (c *clickHouse) Exec(ctx context.Context, sql, id string) (int64, error) {
	return c.do(ctx, sql, id, nil, nil)
}

// Load streams the file as the body of INSERT … FORMAT, the statement in
// the URL.
func (c *clickHouse) Load(ctx context.Context, table string, format benchv1.QueryLoadFormat, r io.Reader) error {
	f := "CSV"
	if format == benchv1.QueryLoadTSV {
		f = "TabSeparated"
	}
	_, err := c.do(ctx, "INSERT INTO "+table+" FORMAT "+f, "", r, nil)
	return err
}

func (c *clickHouse) Close() error {
	c.client.CloseIdleConnections()
	return nil
}

// do runs a statement: in the body, or in the URL when the body is data.
// It reads the whole response (into keep, when given) and counts its
// lines; an error status or an exception at its end is the server's
// message.
func (c *clickHouse) do(ctx context.Context, sql, id string, data io.Reader, keep io.Writer) (int64, error) {
	params := url.Values{}
	if c.t.Database != "" {
		params.Set("database", c.t.Database)
	}
	for k, v := range c.t.Settings {
		params.Set(k, v)
	}
	if _, ok := c.t.Settings["max_execution_time"]; !ok && c.t.Timeout > 0 {
		// The server stops the query too: a client that hangs up does not
		// stop it in every version.
		params.Set("max_execution_time", strconv.Itoa(int(c.t.Timeout.Seconds())))
	}
	if id != "" {
		params.Set("query_id", id)
	}
	body := data
	if data == nil {
		body = strings.NewReader(sql)
	} else {
		params.Set("query", sql)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"?"+params.Encode(), body)
	if err != nil {
		return 0, err
	}
	if c.t.Username != "" || c.t.Password != "" {
		req.SetBasicAuth(c.t.Username, c.t.Password)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("clickhouse: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	tail := &tailWriter{max: 4096}
	w := io.Writer(tail)
	if keep != nil {
		w = io.MultiWriter(tail, keep)
	}
	n, lines, err := countLines(resp.Body, w)
	if err != nil {
		return lines, fmt.Errorf("clickhouse: while reading the result (%d bytes read): %w", n, err)
	}
	if resp.StatusCode != http.StatusOK {
		return lines, fmt.Errorf("clickhouse: %s: %s", resp.Status, oneLine(tail.String()))
	}
	if last := lastLine(tail.String()); exception.MatchString(last) {
		return lines, fmt.Errorf("clickhouse: the result ended with an error: %s", oneLine(last))
	}
	return lines, nil
}

// unwrapURLError drops net/http's `Post "URL":` prefix: the URL holds
// the statement and settings, which the message needs no second time.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// countLines copies r to w and counts its newlines.
func countLines(r io.Reader, w io.Writer) (n, lines int64, err error) {
	buf := make([]byte, 64<<10)
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			n += int64(k)
			lines += int64(bytes.Count(buf[:k], []byte{'\n'}))
			_, _ = w.Write(buf[:k])
		}
		if rerr == io.EOF {
			return n, lines, nil
		}
		if rerr != nil {
			return n, lines, rerr
		}
	}
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	if len(t.buf) > t.max {
		return string(t.buf[len(t.buf)-t.max:])
	}
	return string(t.buf)
}
