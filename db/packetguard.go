package db

import (
	"errors"
	"net"
	"sync/atomic"
)

// errPacketTooLarge: the MySQL server announced a packet longer than the guard's limit.
var errPacketTooLarge = errors.New("the server sent a packet longer than the byte cap")

// mysqlMaxPayload is the payload length of a MySQL packet that another packet continues.
const mysqlMaxPayload = 1<<24 - 1

// packetGuard is the network connection of a read-only MySQL session. It follows the protocol's
// framing (3-byte little-endian payload length, 1-byte sequence number) in what it reads and
// fails the read that carries the header of a packet — or of a logical packet split over
// several — longer than limit, before the driver sees the header and allocates a buffer for the
// payload. The driver then drops the connection, which ends the statement.
type packetGuard struct {
	net.Conn
	limit   int
	hdr     [4]byte
	nhdr    int // header bytes of the next packet seen so far
	left    int // payload bytes of the current packet still to come
	pending int // payload of the logical packet so far
	over    atomic.Bool
}

// Read reads from the connection and checks the packet headers in what it read.
func (g *packetGuard) Read(p []byte) (int, error) {
	if g.over.Load() {
		return 0, errPacketTooLarge
	}
	n, err := g.Conn.Read(p)
	if !g.scan(p[:n]) {
		g.over.Store(true)
		return 0, errPacketTooLarge
	}
	return n, err
}

// scan advances the framing over b and reports false once a packet is over the limit.
func (g *packetGuard) scan(b []byte) bool {
	for len(b) > 0 {
		if g.left > 0 {
			k := min(g.left, len(b))
			g.left -= k
			b = b[k:]
			continue
		}
		k := copy(g.hdr[g.nhdr:], b)
		g.nhdr += k
		b = b[k:]
		if g.nhdr < len(g.hdr) {
			return true
		}
		g.nhdr = 0
		n := int(g.hdr[0]) | int(g.hdr[1])<<8 | int(g.hdr[2])<<16
		g.pending += n
		if g.pending > g.limit {
			return false
		}
		if n < mysqlMaxPayload {
			g.pending = 0
		}
		g.left = n
	}
	return true
}

// tripped reports whether the guard refused a packet.
func (g *packetGuard) tripped() bool { return g.over.Load() }
