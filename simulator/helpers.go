package simulator

// Small string and number helpers shared by every family; nothing here knows a CloudStack command.

import (
	"fmt"
	"strconv"
	"strings"
)

// or is v, or def where v is empty.
func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// without is list less every entry equal to s, case folded.
func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if !strings.EqualFold(x, s) {
			out = append(out, x)
		}
	}
	return out
}

// firstNonEmpty is the first value that is not empty, or "".
func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// containsFold reports whether list holds s, case folded.
func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// countFold counts the entries of list equal to s, case folded.
func countFold(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.EqualFold(x, s) {
			n++
		}
	}
	return n
}

// parseIntOr is NumbersUtil.parseInt.
func parseIntOr(s string, def int) int {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return def
	}
	return int(n)
}

// humanSize is NumbersUtil.toHumanReadableSize.
func humanSize(b int64) string {
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

func itoa(n int) string { return strconv.Itoa(n) }
