package cloudstack

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// TestReadersNeverSeeAPartOfTheStateFile: the file is written in place, so
// processes that read it while others write it (each with its own handle,
// the state growing and shrinking) must only ever find a whole file.
func TestReadersNeverSeeAPartOfTheStateFile(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := boshlog.NewWriterLogger(boshlog.LevelWarn, writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}))
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := openState(dir, logger)
			for i := range 150 {
				s.update(func(st *sharedState) {
					// Grows to a few kilobytes, then empties: later
					// writes are shorter than the file they replace.
					if st.Jobs == nil || len(st.Jobs) > 60 {
						st.Jobs = map[string]*jobTimes{}
					}
					st.Jobs[fmt.Sprintf("%d-%d-%s", p, i, strings.Repeat("x", 40))] = &jobTimes{MeanMS: 1, N: 1}
				})
				s.view(func(*sharedState) {})
			}
		}()
	}
	wg.Wait()
	if strings.Contains(logs.String(), "corrupt") || strings.Contains(logs.String(), "cannot be") {
		t.Errorf("a process found a part of the state file:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
