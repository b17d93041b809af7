package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// The servers of the operator's own targets, played by local servers the
// way ClickHouse's are (clickhouse.go): kwok makes the target pod Ready, and
// the executor starts a local server configured as the pod's container would
// be and points the pod's Services at it. Valkey (and Redis) by
// redis-server with the container's arguments; MySQL and MariaDB by
// Debian's MariaDB with the root password, database and TLS files of the
// pod; MongoDB by FerretDB (hack/build-ferretdb.sh) with the pod's root
// user. A kind that cannot run here (OpenSearch; a Valkey Cluster member, a
// replica) is named in the executor's log once and left without a server.

// errCannotPlay marks a pod no local server can stand for: it is not tried
// again.
var errCannotPlay = errors.New("cannot be played here")

// serverPlayer starts the local server of a target pod.
type serverPlayer func(e *Executor, ctx context.Context, p *corev1.Pod) (*playedServer, error)

// players are the target images the executor plays, by repository.
var players = map[string]serverPlayer{
	clickHouseImage: (*Executor).startClickHouse,
	"valkey/valkey": (*Executor).startValkey, "redis": (*Executor).startValkey,
	"mysql": (*Executor).startMySQL, "mariadb": (*Executor).startMySQL,
	"mongo": (*Executor).startMongo,
}

// startValkey runs redis-server with the container's arguments, its port
// and directory the local ones.
func (e *Executor) startValkey(ctx context.Context, p *corev1.Pod) (*playedServer, error) {
	c := p.Spec.Containers[0]
	env, err := e.resolveEnv(ctx, p, c)
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, expand(a, vals))
	}
	for _, a := range args {
		switch a {
		case "--cluster-enabled":
			return nil, fmt.Errorf("a Valkey Cluster member: %w (test/topology runs Valkey Clusters for real)", errCannotPlay)
		case "--replicaof", "--slaveof":
			return nil, fmt.Errorf("a replica: %w (test/topology runs replication for real)", errCannotPlay)
		}
	}
	r, err := localdb.StartRedisWith(func(port int, dir string) []string { return localValkeyArgs(args, port, dir) })
	if err != nil {
		return nil, err
	}
	backend := r.Addr()
	if err := e.pointServices(ctx, p, backend); err != nil {
		r.Stop()
		return nil, err
	}
	e.logf("pod %s/%s: redis-server (pid %d) at %s stands for it, arguments %q", p.Namespace, p.Name, r.Pid(), backend, args)
	return &playedServer{stopFn: r.Stop}, nil
}

// localValkeyArgs are the container's arguments with the local port and
// directory (the pod's own --port and --dir replaced, --bind left to
// StartRedisWith).
func localValkeyArgs(args []string, port int, dir string) []string {
	out := []string{"--port", strconv.Itoa(port), "--dir", dir}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--port", "--dir", "--bind":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// startMySQL runs a local MariaDB for a MySQL or MariaDB pod: its TLS files
// (the pod's Secret volume) and arguments, the root password, the database.
func (e *Executor) startMySQL(ctx context.Context, p *corev1.Pod) (*playedServer, error) {
	if role := p.Labels[benchv1.LabelInstanceRole]; role == "replica" {
		return nil, fmt.Errorf("a MySQL replica: %w (test/topology runs MariaDB replication for real)", errCannotPlay)
	}
	c := p.Spec.Containers[0]
	env, err := e.resolveEnv(ctx, p, c)
	if err != nil {
		return nil, err
	}
	password, db := getEnv(env, "MYSQL_ROOT_PASSWORD"), getEnv(env, "MYSQL_DATABASE")
	// A short directory: the server's Unix socket path must fit in 108
	// bytes, which a pod's directory under the work directory does not.
	dir, err := os.MkdirTemp("", "dbperf-mysql-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	files, err := e.secretVolumes(ctx, p, c, dir)
	if err != nil {
		return nil, err
	}
	var args []string
	for _, a := range c.Args {
		for mount, local := range files {
			a = strings.ReplaceAll(a, mount, local)
		}
		if a = mariaDBArg(a); a != "" {
			args = append(args, a)
		}
	}
	m, err := localdb.StartMariaDB(dir, args...)
	if err != nil {
		return nil, err
	}
	// The official image's entrypoint: root from anywhere with the
	// password, and MYSQL_DATABASE.
	sql := fmt.Sprintf("CREATE USER IF NOT EXISTS 'root'@'%%' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO 'root'@'%%' WITH GRANT OPTION;",
		strings.ReplaceAll(password, "'", "''"))
	if db != "" {
		sql += fmt.Sprintf(" CREATE DATABASE IF NOT EXISTS `%s`;", strings.ReplaceAll(db, "`", ""))
	}
	if out, err := m.Client("--socket="+m.Socket, "-uroot", "-e", sql); err != nil {
		m.Stop()
		return nil, fmt.Errorf("initialising: %w: %s", err, out)
	}
	backend := "127.0.0.1:" + strconv.Itoa(m.Port)
	if err := e.pointServices(ctx, p, backend); err != nil {
		m.Stop()
		return nil, err
	}
	e.logf("pod %s/%s: MariaDB at %s stands for it (database %q), arguments %q", p.Namespace, p.Name, backend, db, args)
	return &playedServer{stopFn: func() { m.Stop(); _ = os.RemoveAll(dir) }}, nil
}

// mariaDBArg spells a MySQL server argument as MariaDB does, where they
// differ, and keeps the buffer pool small: one machine plays every server.
func mariaDBArg(a string) string {
	switch k, v, _ := strings.Cut(a, "="); k {
	case "--tls-ciphersuites":
		return "--ssl-cipher=" + v
	case "--innodb-redo-log-capacity":
		return "--innodb-log-file-size=" + v
	case "--innodb-buffer-pool-size":
		return "--innodb-buffer-pool-size=256M"
	case "--gtid-mode", "--enforce-gtid-consistency":
		// MySQL's switches for GTID replication: MariaDB keeps GTIDs
		// always and refuses both (exit 7, "unknown variable").
		return ""
	}
	return a
}

// secretVolumes writes the pod's Secret volumes of container c under dir
// and maps each mount path to its local directory.
func (e *Executor) secretVolumes(ctx context.Context, p *corev1.Pod, c corev1.Container, dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, vm := range c.VolumeMounts {
		for _, v := range p.Spec.Volumes {
			if v.Name != vm.Name || v.Secret == nil {
				continue
			}
			s, err := e.o.Client.CoreV1().Secrets(p.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("secret volume %s: %w", v.Name, err)
			}
			local := filepath.Join(dir, "secret-"+v.Name)
			if err := os.MkdirAll(local, 0o755); err != nil {
				return nil, err
			}
			for k, b := range s.Data {
				if err := os.WriteFile(filepath.Join(local, k), b, 0o644); err != nil {
					return nil, err
				}
			}
			out[vm.MountPath] = local
		}
	}
	return out, nil
}

// startMongo runs FerretDB with the pod's root user.
func (e *Executor) startMongo(ctx context.Context, p *corev1.Pod) (*playedServer, error) {
	bin := FerretDBBin()
	if bin == "" {
		return nil, fmt.Errorf("no FerretDB (bash hack/build-ferretdb.sh builds it): %w", errCannotPlay)
	}
	env, err := e.resolveEnv(ctx, p, p.Spec.Containers[0])
	if err != nil {
		return nil, err
	}
	f, err := localdb.StartFerretDB(bin, getEnv(env, "MONGO_INITDB_ROOT_USERNAME"), getEnv(env, "MONGO_INITDB_ROOT_PASSWORD"))
	if err != nil {
		return nil, err
	}
	backend := "127.0.0.1:" + strconv.Itoa(f.Port)
	if err := e.pointServices(ctx, p, backend); err != nil {
		f.Stop()
		return nil, err
	}
	e.logf("pod %s/%s: FerretDB (pid %d) at %s stands for it", p.Namespace, p.Name, f.Pid(), backend)
	return &playedServer{stopFn: f.Stop}, nil
}
