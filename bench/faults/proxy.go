package main

import (
	"net"
	"sync"
)

// proxy is a TCP relay between one node and the database. While cut it forwards nothing in
// either direction and holds new connections unanswered, like a network partition: the node's
// queries hang (its clients still reach it), its leases run out and other nodes take its work
// over; heal lets the held bytes through, so whatever the node was writing arrives late — the
// case fencing must refuse.
//
// A dropping proxy (the links to Redis and S3) instead resets every connection when cut and
// refuses new ones until healed: nothing held arrives late, so an effect a node sent while cut
// is lost, not delayed.
type proxy struct {
	ln       net.Listener
	upstream string
	drop     bool
	mu       sync.Mutex
	open     chan struct{} // closed while the link is up
	conns    map[net.Conn]bool
}

func newProxy(upstream string) (*proxy, error) { return startProxy(upstream, false) }

// newDroppingProxy is a proxy that resets its connections when cut.
func newDroppingProxy(upstream string) (*proxy, error) { return startProxy(upstream, true) }

func startProxy(upstream string, drop bool) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, upstream: upstream, drop: drop, open: make(chan struct{}), conns: map[net.Conn]bool{}}
	close(p.open)
	go p.serve()
	return p, nil
}

func (p *proxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *proxy) relay(c net.Conn) {
	if p.drop && p.isCut() {
		c.Close()
		return
	}
	<-p.gate()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, up)
		p.mu.Unlock()
	}()
	var wg sync.WaitGroup
	for _, pair := range [][2]net.Conn{{up, c}, {c, up}} {
		wg.Go(func() {
			p.copy(pair[0], pair[1])
			pair[0].Close()
			pair[1].Close()
		})
	}
	wg.Wait()
}

// copy forwards src to dst, holding every chunk while the link is cut.
func (p *proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// setCut cuts (true) or heals (false) the link.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open: // up
		if cut {
			p.open = make(chan struct{})
			if p.drop {
				for c := range p.conns {
					c.Close()
				}
			}
		}
	default: // cut
		if !cut {
			close(p.open)
		}
	}
}

// isCut reports whether the link is cut.
func (p *proxy) isCut() bool {
	select {
	case <-p.gate():
		return false
	default:
		return true
	}
}
