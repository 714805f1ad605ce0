// Package transfers runs the work a secondary storage VM does - downloading,
// installing and copying template images - in goroutines that take the state
// lock only to record progress, never while moving bytes. The images live in
// a temporary directory removed when the simulator closes. It is a
// simulator mechanism with no CloudStack behaviour of its own: what runs in
// it cites its Java where it is written (the simulator's
// templates_download.go: the SSVM's download and install; upload.go:
// HttpUploadServerHandler; package imagecheck:
// ImageStoreUtil.checkTemplateFormat and the processors).
package transfers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Pool is one simulator's transfers and the directory of its images.
type Pool struct {
	base string // parent of dir: the state file's directory, or os.TempDir()

	mu      sync.Mutex // guards the fields below
	closed  bool
	dir     string
	lock    *os.File            // held while dir is in use (imagedirs.go)
	running map[string]*running // per template copy ("<template>/<zone>")
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New is the pool of a simulator whose state is kept at statePath (""
// for none); its image directory is made when the first image needs it.
func New(statePath string) *Pool {
	base := os.TempDir()
	if statePath != "" {
		base = filepath.Dir(statePath)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{base: base, running: map[string]*running{}, ctx: ctx, cancel: cancel}
}

type running struct{ cancel context.CancelFunc }

// Base is the directory the image directories are made in: the state
// file's, or the system's temporary directory.
func (x *Pool) Base() string { return x.base }

// Context ends when the pool closes.
func (x *Pool) Context() context.Context { return x.ctx }

// Start runs fn in a goroutine unless the simulator is closing. A non-empty
// key names the template copy the work is for, so Stop can cancel it.
func (x *Pool) Start(key string, fn func(ctx context.Context)) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false
	}
	ctx, cancel := context.WithCancel(x.ctx)
	me := &running{cancel: cancel}
	if key != "" {
		if old := x.running[key]; old != nil {
			old.cancel()
		}
		x.running[key] = me
	}
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer cancel()
		fn(ctx)
		if key != "" {
			x.mu.Lock()
			if x.running[key] == me { // a restarted transfer may have taken the key
				delete(x.running, key)
			}
			x.mu.Unlock()
		}
	}()
	return true
}

// Stop cancels the work on one template copy.
func (x *Pool) Stop(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r := x.running[key]; r != nil {
		r.cancel()
	}
}

// ImagePath is where a template copy's image is kept.
func (x *Pool) ImagePath(templateID, zoneID string) (string, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return "", errors.New("the simulator is shutting down")
	}
	if x.dir == "" {
		dir, lock, err := makeImageDir(x.base)
		if err != nil {
			return "", err
		}
		x.dir, x.lock = dir, lock
	}
	return filepath.Join(x.dir, templateID+"-"+zoneID), nil
}

// ExistingImage is a copy's image path if the image is on disk.
func (x *Pool) ExistingImage(templateID, zoneID string) string {
	x.mu.Lock()
	dir := x.dir
	x.mu.Unlock()
	if dir == "" {
		return ""
	}
	p := filepath.Join(dir, templateID+"-"+zoneID)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// RemoveImage deletes a copy's image, if any.
func (x *Pool) RemoveImage(templateID, zoneID string) {
	if p := x.ExistingImage(templateID, zoneID); p != "" {
		_ = os.Remove(p)
	}
}

// Close cancels all transfers, waits for them and removes the images.
func (x *Pool) Close() {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	x.cancel()
	x.wg.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dir != "" {
		_ = os.RemoveAll(x.dir)
		_ = x.lock.Close()
		x.dir, x.lock = "", nil
	}
}

// Key names a template copy for Start and Stop.
func Key(templateID, zoneID string) string { return templateID + "/" + zoneID }

// Pause waits d, or less if ctx ends; it reports whether ctx is still alive.
func Pause(ctx context.Context, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return ctx.Err() == nil
}
