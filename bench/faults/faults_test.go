package main

import (
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

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
