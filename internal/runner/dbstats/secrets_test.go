package dbstats

import (
	"context"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestCredentialsNeverInErrors: a refused login, against each real server,
// fails with an error that names the server but not the username or the
// password the poller was given.
func TestCredentialsNeverInErrors(t *testing.T) {
	const wrong = "Wrong-Secret-4711"
	cases := map[string]func(t *testing.T) (string, error){
		"postgresql": func(t *testing.T) (string, error) {
			srv := startPostgres(t)
			_, err := NewPostgres(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: wrong, Database: srv.Database})
			return srv.User, err
		},
		"mysql": func(t *testing.T) (string, error) {
			srv := startMariaDB(t, "right-password")
			_, err := NewMySQL(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: "bench", Password: wrong})
			return "bench", err
		},
		"redis": func(t *testing.T) (string, error) {
			srv := testutil.StartRedis(t, "--requirepass", "right-password")
			_, err := NewRedis(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: "dbperf-user", Password: wrong})
			return "dbperf-user", err
		},
		// FerretDB with its authentication on (SCRAM-SHA-256) refuses it.
		"mongodb": func(t *testing.T) (string, error) {
			srv := testutil.StartFerretDB(t, "dbperf-user", "right-password")
			_, err := NewMongoDB(context.Background(), Config{Host: "127.0.0.1", Port: srv.Port, Username: "dbperf-user", Password: wrong})
			return "dbperf-user", err
		},
	}
	for name, connect := range cases {
		t.Run(name, func(t *testing.T) {
			user, err := connect(t)
			if err == nil {
				t.Fatal("a wrong password was accepted")
			}
			t.Logf("the error: %v", err)
			for _, secret := range []string{wrong, user} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a credential (%q): %v", secret, err)
				}
			}
			if !strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("the error does not name the server: %v", err)
			}
		})
	}
}
