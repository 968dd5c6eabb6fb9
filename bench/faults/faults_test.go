package main

import (
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// echoServer listens on loopback and echoes every connection.
func echoServer(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln
}

// TestDroppingProxyResets: a cut of a dropping proxy (the links to Redis and S3) ends the open
// connections and refuses new ones until heal; afterwards a new connection works.
func TestDroppingProxyResets(t *testing.T) {
	ln := echoServer(t)
	p, err := newDroppingProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port()))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("up")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(conn, buf); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	p.setCut(true)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := conn.Read(buf); err == nil {
		t.Fatalf("after the cut the open connection still read %d bytes", n)
	}
	fresh, err := net.Dial("tcp", addr)
	if err == nil {
		_ = fresh.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, err := fresh.Read(buf); err == nil {
			t.Fatalf("a connection made while cut read %d bytes", n)
		}
		fresh.Close()
	}
	p.setCut(false)
	again, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	_, _ = again.Write([]byte("ok"))
	_ = again.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(again, buf); err != nil || string(buf) != "ok" {
		t.Fatalf("after heal: %q, %v", buf, err)
	}
}

// TestProxyCutHoldsBytes: while cut the relay forwards nothing (the bytes are held, not
// dropped) and after heal they arrive, as over a partitioned then healed network.
func TestProxyCutHoldsBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	p, err := newProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port())))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	echo := func(msg string, within time.Duration) (string, error) {
		if _, err := conn.Write([]byte(msg)); err != nil {
			return "", err
		}
		_ = conn.SetReadDeadline(time.Now().Add(within))
		buf := make([]byte, len(msg))
		n, err := io.ReadFull(conn, buf)
		return string(buf[:n]), err
	}
	if got, err := echo("up", 2*time.Second); err != nil || got != "up" {
		t.Fatalf("before the cut: %q, %v", got, err)
	}
	p.setCut(true)
	if got, err := echo("held", 300*time.Millisecond); err == nil || got != "" {
		t.Fatalf("while cut the echo arrived: %q", got)
	}
	p.setCut(false)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "held" {
		t.Fatalf("after heal: %q, %v; want the held bytes", buf, err)
	}
}

// TestPlaceholders: the checks write ? placeholders; PostgreSQL gets $n.
func TestPlaceholders(t *testing.T) {
	pg := &database{kind: "postgres"}
	if got := pg.q("a = ? AND b < ?"); got != "a = $1 AND b < $2" {
		t.Errorf("postgres: %q", got)
	}
	my := &database{kind: "mysql"}
	if got := my.q("a = ?"); got != "a = ?" {
		t.Errorf("mysql: %q", got)
	}
}
