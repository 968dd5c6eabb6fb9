package push

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSmallBuffersEarlyFrames is the guard of the bypass.PushBuffers bypass (push/hijack.go),
// run on both paths whatever SVC_BYPASS_OFF says: a client that sends a ping in the same write
// as its handshake gets the pong (the bytes net/http had read past the request reach the
// library), and a push then arrives (writes bounded by the socket deadline or, on the plain
// path, by the library's context).
func TestSmallBuffersEarlyFrames(t *testing.T) {
	t.Parallel()
	for _, small := range []bool{true, false} {
		name := "plain Accept"
		if small {
			name = "small buffers"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := newOutside(enabled("app"), nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.smallBuffers = small
			hs := httptest.NewServer(s)
			t.Cleanup(hs.Close)
			c, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			mask := [4]byte{1, 2, 3, 4}
			ping := []byte{0x89, 0x80 | 5, mask[0], mask[1], mask[2], mask[3]}
			for i, b := range []byte("early") {
				ping = append(ping, b^mask[i%4])
			}
			req := "GET /?__accessToken=x HTTP/1.1\r\nHost: " + hs.Listener.Addr().String() +
				"\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
			if _, err := c.Write(append([]byte(req), ping...)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("handshake status = %d, want 101", resp.StatusCode)
			}
			if op, payload := readFrame(t, br); op != 0xA || payload != "early" {
				t.Fatalf("first frame = opcode %#x %q, want the pong of the early ping", op, payload)
			}
			if err := s.Push(context.Background(), NewMessage("guard", nil), ToUsers("alice")); err != nil {
				t.Fatal(err)
			}
			if op, payload := readFrame(t, br); op != 0x1 || !strings.Contains(payload, `"type":"guard"`) {
				t.Fatalf("frame = opcode %#x %q, want the pushed text frame", op, payload)
			}
		})
	}
}

// readFrame reads one unmasked server frame (payloads under 64 KiB) and returns its opcode and
// payload.
func readFrame(t *testing.T, br *bufio.Reader) (byte, string) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatal(err)
	}
	n := int(h[1] & 0x7f)
	if n == 126 {
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			t.Fatal(err)
		}
		n = int(l[0])<<8 | int(l[1])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	return h[0] & 0x0f, string(p)
}
