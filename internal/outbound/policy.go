package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Errors of the address policy. Retrying does not change them: callers
// answer InvalidParams (a push config) or fail without retrying.
var (
	// ErrInvalidURL: the URL is not an absolute http or https URL.
	ErrInvalidURL = errors.New("invalid URL")
	// ErrForbiddenAddress: the host resolves to an address the policy refuses.
	ErrForbiddenAddress = errors.New("forbidden address")
	// ErrUnresolvableHost: the host name has no address.
	ErrUnresolvableHost = errors.New("host does not resolve")
)

// MaxURLLength is the longest URL accepted.
const MaxURLLength = 2048

// addressRange is a range of addresses outbound requests may not reach by
// default.
type addressRange struct {
	prefix netip.Prefix
	kind   string // what the range is, for the error message and the allow-list keywords
}

// blocked are the non-public ranges, most specific first so that the error
// names the narrowest one (a metadata address before link-local).
var blocked = func() []addressRange {
	var out []addressRange
	add := func(kind string, prefixes ...string) {
		for _, p := range prefixes {
			out = append(out, addressRange{netip.MustParsePrefix(p), kind})
		}
	}
	// Cloud metadata services (AWS, GCP, Azure, OCI: 169.254.169.254; AWS
	// IPv6: fd00:ec2::254; Alibaba: 100.100.100.200). Only an explicit CIDR
	// (or "all") allows them, never the "link-local" or "private" keywords.
	add(kindMetadata, "169.254.169.254/32", "fd00:ec2::254/128", "100.100.100.200/32")
	add(kindLoopback, "127.0.0.0/8", "::1/128")
	add(kindUnspecified, "0.0.0.0/8", "::/128")
	add(kindPrivate, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
	add(kindCGNAT, "100.64.0.0/10")
	add(kindLinkLocal, "169.254.0.0/16", "fe80::/10")
	add(kindMulticast, "224.0.0.0/4", "ff00::/8")
	add(kindReserved, "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4", "64:ff9b:1::/48", "100::/64")
	return out
}()

const (
	kindMetadata    = "cloud metadata"
	kindLoopback    = "loopback"
	kindUnspecified = "unspecified"
	kindPrivate     = "private"
	kindCGNAT       = "shared (CGNAT)"
	kindLinkLocal   = "link-local"
	kindMulticast   = "multicast"
	kindReserved    = "reserved"
)

// keywords maps the allow-list keywords to the kinds of range they allow.
var keywords = map[string][]string{
	"loopback":   {kindLoopback},
	"private":    {kindPrivate, kindCGNAT},
	"link-local": {kindLinkLocal},
}

// Policy decides which addresses a2aflow's outbound requests may reach (push
// and approval webhooks with --push-allow-hosts, everything else with
// --outbound-allow-hosts).
// Public unicast addresses are always allowed; loopback, private (RFC 1918,
// ULA), shared (CGNAT), link-local, unspecified, multicast, reserved and
// cloud metadata addresses are refused unless the allow-list permits them.
// The zero value (and a nil *Policy) allows no such address.
type Policy struct {
	all   bool
	kinds map[string]bool
	cidrs []netip.Prefix
	// Resolver looks host names up for CheckURL; nil uses net.DefaultResolver.
	Resolver *net.Resolver
}

// ParsePolicy returns the policy allowing, besides public addresses, each
// entry of allow: "loopback", "private" (RFC 1918, ULA and CGNAT ranges),
// "link-local", a CIDR such as "10.1.0.0/16", a single IP address, or "all"
// (no guard at all: only for trusted networks). Empty entries are ignored.
func ParsePolicy(allow []string) (*Policy, error) {
	p := &Policy{kinds: map[string]bool{}}
	for _, entry := range allow {
		entry = strings.ToLower(strings.TrimSpace(entry))
		switch {
		case entry == "":
		case entry == "all":
			p.all = true
		case keywords[entry] != nil:
			for _, k := range keywords[entry] {
				p.kinds[k] = true
			}
		case strings.Contains(entry, "/"):
			prefix, err := netip.ParsePrefix(entry)
			if err != nil {
				return nil, fmt.Errorf("allow-list entry %q: %w", entry, err)
			}
			p.cidrs = append(p.cidrs, prefix.Masked())
		default:
			addr, err := netip.ParseAddr(entry)
			if err != nil {
				return nil, fmt.Errorf("allow-list entry %q is not loopback, private, link-local, all, a CIDR or an IP address", entry)
			}
			p.cidrs = append(p.cidrs, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
		}
	}
	return p, nil
}

// String describes the allow-list, for logs.
func (p *Policy) String() string {
	if p == nil {
		return "public addresses only"
	}
	if p.all {
		return "all addresses"
	}
	var parts []string
	for _, k := range []string{"loopback", "private", "link-local"} {
		if p.kinds[keywords[k][0]] {
			parts = append(parts, k)
		}
	}
	for _, c := range p.cidrs {
		parts = append(parts, c.String())
	}
	if len(parts) == 0 {
		return "public addresses only"
	}
	return "public addresses and " + strings.Join(parts, ", ")
}

// CheckAddr returns an error wrapping ErrForbiddenAddress unless the policy
// allows addr.
func (p *Policy) CheckAddr(addr netip.Addr) error {
	if !addr.IsValid() {
		return fmt.Errorf("%w: no address", ErrForbiddenAddress)
	}
	// Prefix.Contains never matches a zoned or IPv4-mapped address.
	addr = addr.Unmap().WithZone("")
	if p != nil && p.all {
		return nil
	}
	if p != nil {
		for _, c := range p.cidrs {
			if c.Contains(addr) {
				return nil
			}
		}
	}
	for _, embedded := range embeddedIPv4(addr) {
		if err := p.CheckAddr(embedded); err != nil {
			return fmt.Errorf("%w (embedded in %s)", err, addr)
		}
	}
	for _, r := range blocked {
		if !r.prefix.Contains(addr) {
			continue
		}
		if p != nil && r.kind != kindMetadata && p.kinds[r.kind] {
			return nil
		}
		return fmt.Errorf("%w: %s is a %s address, which a2aflow may not reach unless the server's allow-list permits it",
			ErrForbiddenAddress, addr, r.kind)
	}
	return nil
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address a NAT64 (64:ff9b::/96) or 6to4
// (2002::/16) address carries, which routes to that IPv4 address.
func embeddedIPv4(addr netip.Addr) []netip.Addr {
	if !addr.Is6() {
		return nil
	}
	b := addr.As16()
	switch {
	case nat64.Contains(addr):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})}
	case sixToFour.Contains(addr):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	}
	return nil
}

// URLError is a URL that ParseURL refuses. It matches ErrInvalidURL.
type URLError struct {
	// Reason says what is wrong, quoting the URL without its secrets.
	Reason string
}

func (e *URLError) Error() string { return ErrInvalidURL.Error() + ": " + e.Reason }

// Unwrap makes the error match ErrInvalidURL.
func (e *URLError) Unwrap() error { return ErrInvalidURL }

// ParseURL checks that raw is an absolute http or https URL without user
// info, and returns it parsed. Its errors are *URLError.
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, &URLError{"the URL is empty"}
	}
	if len(raw) > MaxURLLength {
		return nil, &URLError{fmt.Sprintf("the URL is longer than %d bytes", MaxURLLength)}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the URL, which may carry a secret.
		return nil, &URLError{fmt.Sprintf("%q does not parse", Redact(raw))}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, &URLError{fmt.Sprintf("%q: the scheme must be http or https", Redact(raw))}
	case u.Hostname() == "":
		return nil, &URLError{fmt.Sprintf("%q has no host", Redact(raw))}
	case u.User != nil:
		return nil, &URLError{fmt.Sprintf("%q carries user info; give credentials another way (a push config's authentication, a credentials file)", Redact(raw))}
	}
	return u, nil
}

// CheckURL checks that raw is a URL the policy allows: an absolute http or
// https URL whose host, and every address it resolves to, is allowed. It
// answers early and clearly (the API refuses a push config with it); the
// guard is the check at dial time (Control), since DNS answers may change.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := ParseURL(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(addr)
	}
	resolver := net.DefaultResolver
	if p != nil && p.Resolver != nil {
		resolver = p.Resolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("%w: %s: %v", ErrUnresolvableHost, host, err)
	}
	for _, addr := range addrs {
		if err := p.CheckAddr(addr); err != nil {
			return fmt.Errorf("%s resolves to a forbidden address: %w", host, err)
		}
	}
	return nil
}

// Control is a net.Dialer Control function that refuses to connect to an
// address the policy does not allow. It sees the address actually dialed,
// after DNS resolution, for every connection including redirect hops.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check dialed address %q: %w", ErrForbiddenAddress, address, err)
	}
	return p.CheckAddr(ap.Addr())
}

// Redact returns raw without its query, fragment and user info, which may
// carry secrets, for error messages and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}
