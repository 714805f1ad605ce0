package spec

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkRegistry measures the registry of `cloudstack-cpi serve`, run
// as a second process, over loopback: GETs as agents send them and durable
// PUTs (fsync'd file and directory before the answer) as the CPI sends
// them, from several concurrent clients for a bounded time each. The store
// is in the temporary directory (BENCH_STORE_DIR changes it): put it on the
// disk a director would use, since a PUT costs two fsyncs.
// Run with: make bench-registry
func BenchmarkRegistry(b *testing.B) {
	clients, seconds, ids := 16, 3.0, 256
	if v := os.Getenv("BENCH_CLIENTS"); v != "" {
		clients, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("BENCH_SECONDS"); v != "" {
		seconds, _ = strconv.ParseFloat(v, 64)
	}
	store := os.Getenv("BENCH_STORE_DIR")
	if store == "" {
		store = b.TempDir()
	}
	base := startServe(b, registryConfig(store)).url("registry")
	settings := []byte(`{"agent_id":"bench","blobstore":{"provider":"dav","options":{"endpoint":"http://10.0.0.6:25250"}},` +
		`"disks":{"system":"/dev/xvda","ephemeral":"/dev/xvdb","persistent":{}},"env":{"bosh":{"password":"` +
		strings.Repeat("x", 106) + `"}},"mbus":"nats://nats:nats@10.0.0.6:4222","networks":{"default":{"type":"manual",` +
		`"ip":"10.0.0.10","netmask":"255.255.255.0","gateway":"10.0.0.1","dns":["10.0.0.2"],"default":["dns","gateway"]}},` +
		`"ntp":["0.pool.ntp.org"],"vm":{"name":"vm-0f1e2d3c"}}`)
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	for i := 0; i < ids; i++ {
		if code := registryPut(client, base, fmt.Sprintf("vm-%d", i), settings); code != 201 {
			b.Fatalf("seeding: %d", code)
		}
	}
	get := func() bool {
		req, _ := http.NewRequest(http.MethodGet, base+fmt.Sprintf("/instances/vm-%d/settings", rand.IntN(ids)), nil)
		req.SetBasicAuth(regUser, regPass)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	put := func() bool {
		code := registryPut(client, base, fmt.Sprintf("vm-%d", rand.IntN(ids)), settings)
		return code == 200
	}
	duration := time.Duration(seconds * float64(time.Second))
	gets := hammer(b, clients, duration, get)
	puts := hammer(b, clients, duration, put)

	fmt.Printf("\nBOSH registry of `cloudstack-cpi serve` over loopback: %d clients, %.0f s per operation, %d-byte settings, %d instances\n",
		clients, seconds, len(settings), ids)
	fmt.Printf("\ndocs/development/performance.md's registry table:\n\n| operation | target | measured | p50 | p99 |\n|---|---|---|---|---|\n")
	row := func(name string, target float64, r hammered) {
		verdict := ""
		if r.rate < target {
			verdict = " (below target)"
		}
		if r.errors > 0 {
			verdict += fmt.Sprintf(" (%d errors)", r.errors)
		}
		fmt.Printf("| registry %s | ≥ %s/s | %s/s%s | %.1f ms | %.0f ms |\n", name, thousands(target), thousands(r.rate),
			verdict, ms(r.p50), ms(r.p99))
	}
	row("GET", 2000, gets)
	row("durable PUT", 500, puts)
	b.ReportMetric(gets.rate, "GET/s")
	b.ReportMetric(puts.rate, "PUT/s")
	if gets.errors+puts.errors > 0 {
		b.Errorf("%d GET and %d PUT failures", gets.errors, puts.errors)
	}
}

type hammered struct {
	rate     float64
	p50, p99 time.Duration
	errors   int
}

// hammer runs op from n goroutines for d and reports the rate of
// successes and the latency percentiles.
func hammer(b *testing.B, n int, d time.Duration, op func() bool) hammered {
	var mu sync.Mutex
	var latencies []time.Duration
	errors := 0
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(stop) {
				t := time.Now()
				if op() {
					mine = append(mine, time.Since(t))
				} else {
					bad++
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			errors += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(latencies) == 0 {
		b.Fatal("no operation succeeded")
	}
	slices.Sort(latencies)
	return hammered{
		rate:   float64(len(latencies)) / elapsed.Seconds(),
		p50:    latencies[len(latencies)/2],
		p99:    latencies[len(latencies)*99/100],
		errors: errors,
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// thousands writes a rate rounded to whole numbers with comma separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
