package simulator

import (
	"crypto/md5"
	"fmt"
	"net/netip"
	"strings"
)

// IPv4 helpers after com.cloud.utils.net.NetUtils, which the admin API's
// checks are written in.

// validIPv4 is NetUtils.isValidIp4: a dotted quad.
func validIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4() && !strings.Contains(s, ":")
}

// validNetmask is NetUtils.isValidIp4Netmask: contiguous ones, then zeros.
func validNetmask(s string) bool {
	_, ok := netmaskBits(s)
	return ok
}

func netmaskBits(s string) (int, bool) {
	if !validIPv4(s) {
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

// cidrOf is NetUtils.getCidrFromGatewayAndNetmask: the network of gateway
// under netmask.
func cidrOf(gateway, netmask string) (netip.Prefix, bool) {
	bits, ok := netmaskBits(netmask)
	if !ok || !validIPv4(gateway) {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(netip.MustParseAddr(gateway), bits).Masked(), true
}

// parseCIDR is NetUtils.isValidIp4Cidr plus the parse: "a.b.c.d/n".
func parseCIDR(s string) (netip.Prefix, bool) {
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

// validateGuestCIDR is NetUtils.validateGuestCidr: a valid IPv4 CIDR within
// one of the private blocks (isNetworkAWithinNetworkB).
func validateGuestCIDR(cidr string) bool {
	p, ok := parseCIDR(cidr)
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

// ipLess compares two valid IPv4 addresses (NetUtils.ip2Long order).
func ipLess(a, b string) bool {
	return netip.MustParseAddr(a).Less(netip.MustParseAddr(b))
}

// rangesOverlap is NetUtils.ipRangesOverlap for valid addresses.
func rangesOverlap(start1, end1, start2, end2 string) bool {
	return !ipLess(end1, start2) && !ipLess(end2, start1)
}

// verifyDomainName is NetUtils.verifyDomainName: at most 190 characters of
// labels of 1 to 63 letters, digits and hyphens, not starting or ending with
// a hyphen.
func verifyDomainName(name string) bool {
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

// nameUUID is java.util.UUID.nameUUIDFromBytes: an MD5 (version 3) UUID,
// which createZone derives the zone token from.
func nameUUID(name string) string {
	b := md5.Sum([]byte(name))
	b[6] = b[6]&0x0f | 0x30
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// parseAddr parses an address the caller has checked; invalid yields the
// zero Addr.
func parseAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}
