package model

import (
	"crypto/md5"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Or is v, or def where v is empty.
func Or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// Without is list less every entry equal to s, case folded.
func Without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if !strings.EqualFold(x, s) {
			out = append(out, x)
		}
	}
	return out
}

// FirstNonEmpty is the first value that is not empty, or "".
func FirstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// ContainsFold reports whether list holds s, case folded.
func ContainsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// CountFold counts the entries of list equal to s, case folded.
func CountFold(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.EqualFold(x, s) {
			n++
		}
	}
	return n
}

// ParseIntOr is NumbersUtil.parseInt.
func ParseIntOr(s string, def int) int {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return def
	}
	return int(n)
}

// HumanSize is NumbersUtil.toHumanReadableSize.
func HumanSize(b int64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.2f TB", float64(b)/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2f KB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", b)
}

// Itoa is strconv.Itoa, short for the many ids and counts answered as strings.
func Itoa(n int) string { return strconv.Itoa(n) }

// NameUUID is java.util.UUID.nameUUIDFromBytes: an MD5 (version 3) UUID,
// which createZone derives the zone token from.
func NameUUID(name string) string {
	b := md5.Sum([]byte(name))
	b[6] = b[6]&0x0f | 0x30
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// LastAddr is the last (broadcast) address of an IPv4 prefix.
func LastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := 32 - p.Bits()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= uint32(1)<<host - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
