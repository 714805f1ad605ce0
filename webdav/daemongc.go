package webdav

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The daemon's garbage collection: CloudStack's secondary storage needs an
// image only until its template is downloaded, so what nobody took back is
// removed after MaxAge.

// Sweep removes the images placed more than MaxAge before now, and
// uploads untouched for as long. It reports how many it removed.
func (d *Daemon) Sweep(now time.Time) (int, error) {
	removed := 0
	var errs []error
	sweep := func(dir string, match func(fs.DirEntry) bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, e := range entries {
			if !match(e) {
				continue
			}
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < d.maxAge {
				continue
			}
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				errs = append(errs, err)
				continue
			}
			d.logf("webdav: garbage-collected %s, untouched since %s", short(e.Name()), info.ModTime().UTC().Format(time.RFC3339))
			removed++
		}
	}
	// A token directory's time is when its image was placed: renaming into
	// it sets it, whatever the image file's own times (a hard link keeps
	// the original's).
	sweep(d.dir, func(e fs.DirEntry) bool { return e.IsDir() && ValidToken(e.Name()) })
	sweep(filepath.Join(d.dir, incomingDir), func(fs.DirEntry) bool { return true })
	return removed, errors.Join(errs...)
}

// CollectGarbage sweeps now and then every interval until ctx ends.
func (d *Daemon) CollectGarbage(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := d.Sweep(time.Now()); err != nil {
			d.logf("webdav garbage collection: %s", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// GCInterval is how often the daemon sweeps for a given max age.
func GCInterval(maxAge time.Duration) time.Duration {
	return min(max(maxAge/10, time.Second), time.Hour)
}

// dirFS serves <dir>/<token>/<name> files and nothing else: not the root,
// not a token directory, not incoming/, not a symlink.
