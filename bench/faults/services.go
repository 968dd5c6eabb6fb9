package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/svc-framework/svc/internal/testservice"
)

// The harness runs its own PostgreSQL (or MariaDB), Redis and S3 server on free loopback ports,
// in its work directory: it restarts and stops them, which it must not do to the services the
// rest of the test suite (and other runs on the machine) share.

// proc is one child process the harness starts, stops and restarts.
type proc struct {
	name string
	args []string
	env  []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// command is how the harness makes every child process (servers, nodes, the CLI, initdb): its
// environment is the harness's own without the caller's SVC_* configuration (svctest.ChildEnv),
// followed by env, so a variable such as SVC_APP_PORT exported in the caller's shell cannot
// override a node's configuration file; only what the harness means to set reaches the child.
func command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = testservice.ChildEnv(env...)
	return cmd
}

// start launches the process in its own process group, output appended to its log.
func (p *proc) start() error {
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := command(p.env, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func(done chan struct{}) {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}(p.done)
	return nil
}

// exited reports whether the process was started and has ended on its own.
func (p *proc) exited() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the process group.
func (p *proc) signal(sig syscall.Signal) {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// kill SIGKILLs the process and waits for it to exit.
func (p *proc) kill() {
	if p.cmd == nil {
		return
	}
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

// stop asks the process to end with SIGTERM and kills it after grace.
func (p *proc) stop(grace time.Duration) {
	if p.cmd == nil {
		return
	}
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
		p.cmd = nil
	case <-time.After(grace):
		p.kill()
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls ok every 100 ms until it returns nil or the timeout passes.
func waitFor(what string, timeout time.Duration, ok func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ok()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func dialOK(addr string) func() error {
	return func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
}

// database is the private database server of a run.
type database struct {
	kind   string // postgres or mysql
	port   int
	dir    string
	proc   *proc
	prefix []string // runuser prefix when the harness is root
}

// startDatabase initialises and starts a private server of kind under dir.
func startDatabase(kind, dir string) (*database, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d := &database{kind: kind, port: port, dir: filepath.Join(dir, kind)}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return nil, err
	}
	data := filepath.Join(d.dir, "data")
	switch kind {
	case "postgres":
		bin, err := postgresBin()
		if err != nil {
			return nil, err
		}
		if os.Geteuid() == 0 { // initdb and postgres refuse to run as root
			if err := chownTo(d.dir, "postgres"); err != nil {
				return nil, err
			}
			d.prefix = []string{"runuser", "-u", "postgres", "--"}
		}
		initdb := append(append([]string{}, d.prefix...), filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
		if out, err := command(nil, initdb...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb: %w\n%s", err, out)
		}
		// Durable settings (the defaults): the run kills the server, and a commit it
		// acknowledged must survive that, as in production.
		d.proc = &proc{name: "postgres", log: filepath.Join(dir, "postgres.log"),
			args: append(append([]string{}, d.prefix...), filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
				"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+d.dir,
				"-c", "max_connections=300")}
	case "mysql":
		args := []string{"mariadb-install-db", "--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}
		if os.Geteuid() == 0 {
			if err := chownTo(d.dir, "mysql"); err != nil {
				return nil, err
			}
			args = append(args, "--user=mysql")
		}
		if out, err := command(nil, args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
		}
		margs := []string{"mariadbd", "--no-defaults", "--datadir=" + data, "--port=" + strconv.Itoa(port),
			"--bind-address=127.0.0.1", "--socket=" + filepath.Join(d.dir, "sock"), "--pid-file=" + filepath.Join(d.dir, "pid"),
			"--innodb-flush-log-at-trx-commit=1", "--max-connections=300", "--skip-log-bin", "--innodb-buffer-pool-size=64M"}
		if os.Geteuid() == 0 {
			margs = append(margs, "--user=mysql")
		}
		d.proc = &proc{name: "mariadb", log: filepath.Join(dir, "mariadb.log"), args: margs}
	default:
		return nil, fmt.Errorf("unknown database %q (postgres or mysql)", kind)
	}
	if err := d.start(); err != nil {
		return nil, err
	}
	return d, d.exec("CREATE DATABASE faults")
}

// start starts the server and waits until it answers queries.
func (d *database) start() error {
	if err := d.proc.start(); err != nil {
		return err
	}
	return waitFor(d.kind, 60*time.Second, func() error {
		db, err := sql.Open(d.driver(), d.dsn(""))
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return db.PingContext(ctx)
	})
}

// crash kills the server without a clean shutdown (its recovery replays the log). The
// postmaster makes itself a session leader, away from runuser's process group, so its group
// (the postmaster and every backend) is killed by the pid in its lock file.
func (d *database) crash() {
	if d.kind == "postgres" {
		if b, err := os.ReadFile(filepath.Join(d.dir, "data", "postmaster.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])); err == nil && pid > 0 {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
	}
	d.proc.kill()
}

func (d *database) driver() string {
	if d.kind == "postgres" {
		return "pgx"
	}
	return "mysql"
}

// dsn is the harness's own connection string (database "" = the server's default).
func (d *database) dsn(name string) string {
	if d.kind == "postgres" {
		if name == "" {
			name = "postgres"
		}
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", d.port, name)
	}
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s?parseTime=true", d.port, name)
}

func (d *database) exec(q string) error {
	db, err := sql.Open(d.driver(), d.dsn(""))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(q)
	return err
}

// open is a handle on the run's database for the checks.
func (d *database) open() (*sql.DB, error) { return sql.Open(d.driver(), d.dsn("faults")) }

// postgresBin finds the newest PostgreSQL server binaries.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(dirs) == 0 {
		return "", errors.New("no /usr/lib/postgresql/*/bin: install Debian's postgresql (scripts/services.sh does)")
	}
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a < b
	})
	return dirs[len(dirs)-1], nil
}

// chownTo gives dir (and its parents' traversal is assumed) to the OS user name.
func chownTo(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

// portAndDir picks a free port and creates dir/name for a service's data.
func portAndDir(dir, name string) (int, string, error) {
	port, err := freePort()
	if err != nil {
		return 0, "", err
	}
	data := filepath.Join(dir, name)
	return port, data, os.MkdirAll(data, 0o755)
}

// startRedis starts a private Redis that logs every write to its append-only file before
// answering, so a SIGKILL loses nothing (a restart is a fault of availability, not of data).
func startRedis(dir string) (*proc, int, error) {
	port, rdir, err := portAndDir(dir, "redis")
	if err != nil {
		return nil, 0, err
	}
	p := &proc{name: "redis", log: filepath.Join(dir, "redis.log"), args: []string{"redis-server", "--port", strconv.Itoa(port),
		"--bind", "127.0.0.1", "--dir", rdir, "--save", "", "--appendonly", "yes", "--appendfsync", "always"}}
	if err := p.start(); err != nil {
		return nil, 0, err
	}
	return p, port, waitFor("redis", 20*time.Second, dialOK(fmt.Sprintf("127.0.0.1:%d", port)))
}

// S3 keys of the private gateway (a throwaway local server, not secrets).
const (
	s3Access = "faultsaccesskey"
	s3Secret = "faultssecretkey0123456789"
)

// startS3 starts a private versitygw on a free port over dir/s3.
func startS3(bin, dir string) (*proc, int, error) {
	port, data, err := portAndDir(dir, "s3")
	if err != nil {
		return nil, 0, err
	}
	p := &proc{name: "versitygw", log: filepath.Join(dir, "versitygw.log"),
		env:  []string{"ROOT_ACCESS_KEY=" + s3Access, "ROOT_SECRET_KEY=" + s3Secret},
		args: []string{bin, "--port", fmt.Sprintf("127.0.0.1:%d", port), "--quiet", "posix", data}}
	if err := p.start(); err != nil {
		return nil, 0, err
	}
	return p, port, waitFor("versitygw", 30*time.Second, dialOK(fmt.Sprintf("127.0.0.1:%d", port)))
}

// q rewrites ? placeholders for the server's driver ($1, $2, … on PostgreSQL).
func (d *database) q(query string) string {
	if d.kind != "postgres" {
		return query
	}
	out := make([]byte, 0, len(query)+8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			out = append(out, '$')
			out = strconv.AppendInt(out, int64(n), 10)
			continue
		}
		out = append(out, query[i])
	}
	return string(out)
}

// ident quotes an identifier that is a reserved word for the server's dialect.
func (d *database) ident(name string) string {
	if d.kind == "postgres" {
		return `"` + name + `"`
	}
	return "`" + name + "`"
}
