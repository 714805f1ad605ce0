package stemcell

import (
	"fmt"
	"io"
	"time"
)

// Progress reports how a transfer goes, as percent and MB/s lines.
type Progress struct {
	Label    string
	Every    time.Duration
	Log      func(format string, args ...any)
	started  time.Time
	lastSaid time.Time
}

// Reader counts what passes through r, reporting as it goes and at the end.
func (p Progress) Reader(r io.Reader, total int64) io.Reader {
	if p.Log == nil {
		return r
	}
	if p.Every == 0 {
		p.Every = 5 * time.Second
	}
	p.started = time.Now()
	p.lastSaid = p.started
	return &progressReader{r: r, total: total, p: p}
}

type progressReader struct {
	r     io.Reader
	total int64
	done  int64
	p     Progress
	ended bool
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.done += int64(n)
	now := time.Now()
	if (err == io.EOF || pr.done == pr.total) && !pr.ended {
		pr.ended = true
		pr.say(now)
	} else if now.Sub(pr.p.lastSaid) >= pr.p.Every {
		pr.say(now)
	}
	return n, err
}

func (pr *progressReader) say(now time.Time) {
	pr.p.lastSaid = now
	secs := now.Sub(pr.p.started).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(pr.done) / 1e6 / secs
	}
	pct := 100.0
	if pr.total > 0 {
		pct = 100 * float64(pr.done) / float64(pr.total)
	}
	pr.p.Log("%s: %.0f%% (%s of %s) at %.1f MB/s", pr.p.Label, pct, size(pr.done), size(pr.total), rate)
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
