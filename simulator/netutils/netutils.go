// Package netutils holds the IPv4 helpers of com.cloud.utils.net.NetUtils,
// which the simulator's admin API checks are written in.
package netutils

import (
	"net/netip"
	"strings"
)

// ValidIPv4 is NetUtils.isValidIp4: a dotted quad.
func ValidIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4() && !strings.Contains(s, ":")
}

// ValidNetmask is NetUtils.isValidIp4Netmask: contiguous ones, then zeros.
func ValidNetmask(s string) bool {
	_, ok := NetmaskBits(s)
	return ok
}

// NetmaskBits is the prefix length of a valid IPv4 netmask.
func NetmaskBits(s string) (int, bool) {
	if !ValidIPv4(s) {
		return 0, false
	}
	b := netip.MustParseAddr(s).As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	ones := 0
	for v&0x80000000 != 0 {
		ones++
		v <<= 1
	}
	return ones, v == 0
}

// CIDROf is NetUtils.getCidrFromGatewayAndNetmask: the network of gateway
// under netmask.
func CIDROf(gateway, netmask string) (netip.Prefix, bool) {
	bits, ok := NetmaskBits(netmask)
	if !ok || !ValidIPv4(gateway) {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(netip.MustParseAddr(gateway), bits).Masked(), true
}

// ParseCIDR is NetUtils.isValidIp4Cidr plus the parse: "a.b.c.d/n".
func ParseCIDR(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, false
	}
	return p, true
}

// guestCIDRBlocks are NetUtils.validateGuestCidr's allowed blocks: RFC 1918
// and RFC 6598's shared address space.
var guestCIDRBlocks = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10")}

// ValidateGuestCIDR is NetUtils.validateGuestCidr: a valid IPv4 CIDR within
// one of the private blocks (isNetworkAWithinNetworkB).
func ValidateGuestCIDR(cidr string) bool {
	p, ok := ParseCIDR(cidr)
	if !ok {
		return false
	}
	for _, b := range guestCIDRBlocks {
		if p.Bits() >= b.Bits() && b.Contains(p.Masked().Addr()) {
			return true
		}
	}
	return false
}

// IPLess compares two valid IPv4 addresses (NetUtils.ip2Long order).
func IPLess(a, b string) bool {
	return netip.MustParseAddr(a).Less(netip.MustParseAddr(b))
}

// RangesOverlap is NetUtils.ipRangesOverlap for valid addresses.
func RangesOverlap(start1, end1, start2, end2 string) bool {
	return !IPLess(end1, start2) && !IPLess(end2, start1)
}

// VerifyDomainName is NetUtils.verifyDomainName: at most 190 characters of
// labels of 1 to 63 letters, digits and hyphens, not starting or ending with
// a hyphen.
func VerifyDomainName(name string) bool {
	if len(name) > 190 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// ParseAddr parses an address the caller has checked; invalid yields the
// zero Addr.
func ParseAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}
