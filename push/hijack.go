package push

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
)

// Buffer sizes of an accepted connection. Inbound traffic is control frames (pongs, close) and
// discarded data frames, so a small read buffer suffices; a frame larger than the write buffer
// costs one more write call. net/http's hijacked buffers (4 KiB each) would be most of the
// memory of an idle connection (bench/push).
const (
	readBufferSize  = 512
	writeBufferSize = 1024
)

// smallBuffers hands the WebSocket library a hijacked connection with small buffers instead of
// net/http's. It is a performance bypass (bypass.PushBuffers, docs/architecture.md "Performance
// bypasses"; guard: TestSmallBuffersEarlyFrames): it relies on coder/websocket adopting the
// returned reader's buffered bytes and on no deadline of its own on the connection. Bytes the server had already read past the request stay in front of the stream.
type smallBuffers struct {
	http.ResponseWriter
	conn *net.Conn // receives the hijacked connection (write deadlines)
}

// Hijack implements http.Hijacker.
func (s smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	*s.conn = c
	n := brw.Reader.Buffered()
	if n == 0 {
		return c, bufio.NewReadWriter(bufio.NewReaderSize(c, readBufferSize), bufio.NewWriterSize(c, writeBufferSize)), nil
	}
	// Bytes the client sent right after the handshake are in net/http's buffer. The library
	// keeps only what the returned reader has buffered (it resets the reader onto the
	// connection), so they are moved into the new reader's buffer, which is made large enough.
	early, _ := brw.Reader.Peek(n)
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), c), max(readBufferSize, n))
	if _, err := br.Peek(n); err != nil {
		return nil, nil, err
	}
	return c, bufio.NewReadWriter(br, bufio.NewWriterSize(c, writeBufferSize)), nil
}

// Unwrap lets http.ResponseController reach the wrapped writer.
func (s smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }
