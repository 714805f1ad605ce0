package cpi

import "testing"

func TestDriveLettersFollowLinux(t *testing.T) {
	for n, want := range map[int64]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		if got := driveLetters(n); got != want {
			t.Errorf("driveLetters(%d) = %q, want %q", n, got, want)
		}
	}
}
