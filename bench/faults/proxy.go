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
type proxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	open     chan struct{} // closed while the link is up
}

func newProxy(upstream string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, upstream: upstream, open: make(chan struct{})}
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
	<-p.gate()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
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
		}
	default: // cut
		if !cut {
			close(p.open)
		}
	}
}
