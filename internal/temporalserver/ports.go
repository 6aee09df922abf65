package temporalserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// ErrAddrInUse is returned (wrapped, with the address and which listener in
// the message) when a port is taken.
var ErrAddrInUse = errors.New("address already in use")

// internalHost is where the history, matching and worker services listen:
// they only talk to each other and to the frontend, never to clients.
const internalHost = "127.0.0.1"

// endpoint is a listen address split into what the server libraries need.
type endpoint struct {
	bindHost string // IP to bind; "" binds all interfaces
	port     int
}

// dialAddr is the host:port a local client dials to reach e: a wildcard
// bind is reachable on the loopback address.
func (e endpoint) dialAddr() string {
	host := e.bindHost
	switch {
	case host == "" || host == "0.0.0.0":
		host = "127.0.0.1"
	case host == "::":
		host = "::1"
	}
	return net.JoinHostPort(host, strconv.Itoa(e.port))
}

// listenAddr is the host:port to bind.
func (e endpoint) listenAddr() string {
	return net.JoinHostPort(e.bindHost, strconv.Itoa(e.port))
}

// parseEndpoint splits addr into host and port. Only IP hosts and
// "localhost" are accepted because the server's BindOnIP setting takes an IP.
func parseEndpoint(what, addr string) (endpoint, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s address %q: %w", what, addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return endpoint{}, fmt.Errorf("%s address %q: invalid port", what, addr)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if host != "" && net.ParseIP(host) == nil {
		return endpoint{}, fmt.Errorf("%s address %q: host must be an IP address or localhost", what, addr)
	}
	return endpoint{bindHost: host, port: port}, nil
}

// portReservations holds listeners on every port the servers will bind. They
// prove the ports are free, and keep the free ports picked for port 0
// distinct, until release is called right before the servers bind them.
type portReservations struct {
	listeners []net.Listener
}

// reserve listens on e and returns e with its real port (the picked one when
// e.port is 0). A taken port yields an error wrapping ErrAddrInUse that names
// the listener, such as "temporal frontend 127.0.0.1:7233: address already in
// use".
func (r *portReservations) reserve(what string, e endpoint) (endpoint, error) {
	l, err := net.Listen("tcp", e.listenAddr())
	if err != nil {
		if isAddrInUse(err) {
			return e, fmt.Errorf("%s %s: %w", what, e.listenAddr(), ErrAddrInUse)
		}
		return e, fmt.Errorf("%s %s: %w", what, e.listenAddr(), err)
	}
	r.listeners = append(r.listeners, l)
	e.port = l.Addr().(*net.TCPAddr).Port
	return e, nil
}

// take removes the listener reserved for e from r and returns it, for a
// server that serves on it directly, or nil if r holds none.
func (r *portReservations) take(e endpoint) net.Listener {
	for i, l := range r.listeners {
		if l.Addr().(*net.TCPAddr).Port == e.port {
			r.listeners = append(r.listeners[:i], r.listeners[i+1:]...)
			return l
		}
	}
	return nil
}

// release closes all listeners; it is safe to call more than once.
func (r *portReservations) release() {
	for _, l := range r.listeners {
		_ = l.Close()
	}
	r.listeners = nil
}

// isAddrInUse reports whether err says the address is taken. The message
// check covers Windows, whose WSAEADDRINUSE is not syscall.EADDRINUSE.
func isAddrInUse(err error) bool {
	if errors.Is(err, syscall.EADDRINUSE) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "address already in use") ||
		strings.Contains(msg, "only one usage of each socket address")
}
