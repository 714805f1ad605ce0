package netutils

import "testing"

func TestNetmasks(t *testing.T) {
	for mask, want := range map[string]int{"255.255.255.0": 24, "255.255.0.0": 16, "255.255.255.255": 32, "0.0.0.0": 0} {
		if bits, ok := NetmaskBits(mask); !ok || bits != want {
			t.Errorf("NetmaskBits(%s) = %d, %v; want %d", mask, bits, ok, want)
		}
	}
	for _, bad := range []string{"255.0.255.0", "255.255.255.1", "255.255.255", "fe80::1"} {
		if ValidNetmask(bad) {
			t.Errorf("ValidNetmask(%s) = true", bad)
		}
	}
	if p, ok := CIDROf("10.1.2.1", "255.255.255.0"); !ok || p.String() != "10.1.2.0/24" {
		t.Errorf("CIDROf = %v, %v", p, ok)
	}
}

func TestGuestCIDRs(t *testing.T) {
	for cidr, want := range map[string]bool{
		"10.1.0.0/16": true, "172.16.0.0/12": true, "172.16.0.0/11": false, "192.168.10.0/24": true,
		"100.64.0.0/10": true, "8.8.8.0/24": false, "10.0.0.0": false, "fd00::/8": false,
	} {
		if got := ValidateGuestCIDR(cidr); got != want {
			t.Errorf("ValidateGuestCIDR(%s) = %v, want %v", cidr, got, want)
		}
	}
}

func TestRangesAndDomains(t *testing.T) {
	if !RangesOverlap("10.0.0.1", "10.0.0.10", "10.0.0.10", "10.0.0.20") {
		t.Error("ranges sharing an end do not overlap")
	}
	if RangesOverlap("10.0.0.1", "10.0.0.9", "10.0.0.10", "10.0.0.20") {
		t.Error("adjacent ranges overlap")
	}
	for name, want := range map[string]bool{"cs2cloud.internal": true, "a-b.c": true, "-a.b": false, "a..b": false, "a_b": false} {
		if got := VerifyDomainName(name); got != want {
			t.Errorf("VerifyDomainName(%q) = %v, want %v", name, got, want)
		}
	}
}
