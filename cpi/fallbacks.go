package cpi

// A value, or the fallback that stands when it is not set.

// firstOf is the first value that is set.
func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// firstInt is the first number that is not 0.
func firstInt(values ...int) int {
	for _, v := range values {
		if v != 0 {
			return v
		}
	}
	return 0
}

// boolOr is v if it is set, else def.
func boolOr(v *bool, def bool) bool {
	if v != nil {
		return *v
	}
	return def
}
