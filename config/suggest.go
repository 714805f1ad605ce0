package config

import "sort"

// nearest is the known key closest to key by edit distance (insertions,
// deletions, substitutions and swaps of neighbours, each counting one),
// when it is close enough to be the key meant: within a third of key's
// length, at least 1 and at most 3 edits, so that "apikey" finds api_key
// and "endpiont" endpoint, but "zone" does not find "name". Ties
// go to the first in sorted order; "" when none is close.
func nearest(key string, known []string) string {
	limit := min(max(len([]rune(key))/3, 1), 3)
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	best, bestDistance := "", limit+1
	for _, k := range sorted {
		if d := editDistance(key, k); d < bestDistance {
			best, bestDistance = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	rows := make([][]int, len(x)+1)
	for i := range rows {
		rows[i] = make([]int, len(y)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(x)][len(y)]
}
