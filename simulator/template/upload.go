package template

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/imagecheck"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// uploadRefusal is a refused upload: the HTTP status and the text the SSVM answers.
type uploadRefusal struct {
	status int
	text   string
}

// ServeUpload is the SSVM's POST upload receiver (HttpUploadServerHandler,
// NfsPostUploadRequestValidationService, NfsSecondaryStorageResource).
// It needs no API signature: the signed headers from
// getUploadParamsForTemplate authorise it. The file is streamed to disk.
func (s *SSVM) ServeUpload(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	status, text, lost := s.uploadFault(r, id)
	if status == 0 {
		status, text = s.receiveUpload(r, id)
	}
	// Logged before the answer goes out, as API requests are; the headers
	// (signature, metadata) are never logged.
	latency := time.Since(start)
	entry := kernel.LoggedRequest{Time: start.UTC(), Method: r.Method, Command: "upload",
		Params: map[string]string{"id": id}, Status: status, LatencyMS: float64(latency.Microseconds()) / 1000}
	if lost {
		entry.Fault = "answer lost"
	}
	s.Reqlog.Add(entry)
	s.Logf("upload %s %q %d %s", r.Method, id, status, latency.Round(time.Microsecond))
	if lost {
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

// uploadFault applies a fault rule for the command "upload": the SSVM
// answers in plain text, so a rule gives the status (400 by default) and
// text, after its delay, and the upload is failed as a refused one is. It
// returns 0 when no rule fires, and whether the answer is to be lost after
// the upload is received (a test instrument: no CloudStack Java stands
// behind fault rules). A client that goes away during the delay leaves
// the SSVM with no upload entity, as if it never POSTed.
func (s *SSVM) uploadFault(r *http.Request, id string) (int, string, bool) {
	f := s.Faults.Match("upload")
	if f == nil {
		return 0, "", false
	}
	f.Hold(r.Context())
	if r.Context().Err() != nil {
		return http.StatusServiceUnavailable, "client gone", false
	}
	if f.ErrorCode == 0 && !f.Raw {
		return 0, "", f.Lost
	}
	reply := f.RawReply()
	if f.ErrorCode == 0 {
		reply.Status = http.StatusBadRequest
	}
	s.Mu.Lock()
	s.poisonUpload(id)
	s.Mu.Unlock()
	return reply.Status, reply.Raw, false
}

func (s *SSVM) receiveUpload(r *http.Request, id string) (int, string) {
	if r.Method != http.MethodPost {
		return http.StatusBadRequest, "only post requests are allowed"
	}
	templateID, zoneID, uerr := s.admitUpload(r, id)
	if uerr != nil {
		return uerr.status, uerr.text
	}
	dst, err := s.Xfer.ImagePath(templateID, zoneID)
	if err != nil {
		s.uploadFailed(templateID, zoneID)
		return http.StatusInternalServerError, "Internal Server Error"
	}
	filename, uerr := s.storeUpload(r, templateID, zoneID, dst)
	if uerr != nil {
		_ = os.Remove(dst)
		return uerr.status, uerr.text
	}
	return s.installUpload(templateID, zoneID, dst, filename)
}

// admitUpload runs the checks made before any byte is read; failures after
// the header check mark the upload failed, as updateStateMapWithError does.
// It returns the template and zone ids.
func (s *SSVM) admitUpload(r *http.Request, id string) (string, string, *uploadRefusal) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	defer s.Persist()
	if s.Closed {
		return "", "", &uploadRefusal{http.StatusServiceUnavailable, "the simulator is shutting down"}
	}
	meta, bad := s.checkUploadRequest(r, id)
	if bad != nil {
		if bad.poison {
			s.poisonUpload(id)
		}
		return "", "", &uploadRefusal{http.StatusBadRequest, bad.text}
	}
	t, cp, text := s.uploadCopy(r, id, meta)
	if text != "" {
		return "", "", &uploadRefusal{http.StatusBadRequest, text}
	}
	// The SSVM now holds an upload entity; the management server learns of
	// it on its upload monitor's next poll.
	cp.UploadState, cp.UploadPercent = uploadInProgress, 0
	s.Dirty = true
	return t.ID, cp.ZoneID, nil
}

// badUpload is a refused upload's text, and whether the refusal marks the
// pending upload failed.
type badUpload struct {
	text   string
	poison bool
}

// checkUploadRequest is the header checks: the compulsory fields, a
// content length, the signature, the expiry and the metadata naming this
// template. The caller holds the state lock.
func (s *SSVM) checkUploadRequest(r *http.Request, id string) (uploadMetadata, *badUpload) {
	var meta uploadMetadata
	signature, metadata, expires := r.Header.Get("X-Signature"), r.Header.Get("X-Metadata"), r.Header.Get("X-Expires")
	// HttpUploadServerHandler reads x-forwarded-host; a client POSTing to
	// the simulator directly has no proxy in between, so Host stands in.
	host := r.Host
	if fwd := r.Header.Get("X-Forwarded-Host"); fwd != "" {
		host = fwd
	}
	if signature == "" || metadata == "" || expires == "" {
		return meta, &badUpload{"signature, metadata and expires are compulsory fields.", true}
	}
	if r.ContentLength <= 0 {
		return meta, &badUpload{"content length is not set in the request or has invalid value.", false}
	}
	want := UploadSignature(s.State, metadata+signedUploadURL(host, id)+expires)
	if subtle.ConstantTimeCompare([]byte(want), []byte(signature)) != 1 {
		return meta, &badUpload{"signature validation failed.", true}
	}
	deadline, err := time.Parse(time.RFC3339Nano, expires)
	if err != nil || deadline.Before(s.Now()) {
		return meta, &badUpload{"request not valid anymore.", true}
	}
	raw, err := base64.StdEncoding.DecodeString(metadata)
	if err == nil {
		err = json.Unmarshal(raw, &meta)
	}
	if err != nil || !strings.EqualFold(meta.EntityUUID, id) {
		return meta, &badUpload{"unable decode and deserialize metadata.", true}
	}
	return meta, nil
}

// uploadCopy is the template copy the one-time URL was made for, when it
// is still unused and the content fits maxUploadSizeGB (a larger one marks
// the upload failed); otherwise the refusal's text.
func (s *SSVM) uploadCopy(r *http.Request, id string, meta uploadMetadata) (*model.Template, *model.TemplateCopy, string) {
	t, _ := model.ByID(s.State.Templates, id)
	var cp *model.TemplateCopy
	if t != nil && t.Removed == nil {
		cp = t.CopyIn(meta.ZoneUUID)
	}
	switch {
	case cp == nil:
		return nil, nil, "The one time post url is already used"
	case cp.UploadState != "":
		return nil, nil, fmt.Sprintf("The one time post url is already used and the upload is in %s state.", cp.UploadState)
	}
	if gb := (r.ContentLength + 1<<30 - 1) >> 30; gb > maxUploadSizeGB {
		s.poisonUpload(id)
		return nil, nil, fmt.Sprintf("Maximum file upload size exceeded. Content Length received: %dGB. Maximum allowed size: %dGB.",
			gb, maxUploadSizeGB)
	}
	return t, cp, ""
}

// poisonUpload marks a template's pending upload failed on the SSVM
// (NfsSecondaryStorageResource.updateStateMapWithError); the upload monitor
// reports it. The caller holds the state lock.
func (s *SSVM) poisonUpload(id string) {
	t, _ := model.ByID(s.State.Templates, id)
	if t == nil || t.Removed != nil || !t.PostUpload {
		return
	}
	for _, cp := range t.LiveCopies() {
		if cp.UploadState == "" || cp.UploadState == uploadInProgress {
			cp.UploadState = uploadError
			s.Dirty = true
		}
	}
}

// uploadFailed records on the SSVM that an admitted upload failed.
func (s *SSVM) uploadFailed(templateID, zoneID string) {
	s.withCopy(templateID, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) { cp.UploadState = uploadError })
}

// storeUpload streams the multipart body's file part to dst and returns the
// part's file name.
func (s *SSVM) storeUpload(r *http.Request, templateID, zoneID, dst string) (string, *uploadRefusal) {
	fail := func(status int, text string) (string, *uploadRefusal) {
		s.uploadFailed(templateID, zoneID)
		return "", &uploadRefusal{status, text}
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return fail(http.StatusInternalServerError, err.Error())
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return fail(http.StatusUnprocessableEntity, "received entity is not a file")
		}
		if err != nil {
			return fail(http.StatusInternalServerError, err.Error())
		}
		if part.FileName() == "" {
			_, _ = io.Copy(io.Discard, part)
			continue
		}
		name := part.FileName()
		if err := s.writeUpload(r.Context(), part, dst, r.ContentLength, templateID, zoneID); err != nil {
			return fail(http.StatusInternalServerError, "file receive failed or connection closed prematurely.")
		}
		return name, nil
	}
}

// writeUpload copies the file part to disk, recording the percentage of the
// request body received.
func (s *SSVM) writeUpload(ctx context.Context, part io.Reader, dst string, total int64, templateID, zoneID string) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	progress := &progressWriter{total: total, report: func(pct int) {
		s.withCopy(templateID, zoneID, false, func(t *model.Template, cp *model.TemplateCopy) { cp.UploadPercent = min(pct, 99) })
	}}
	_, err = io.CopyBuffer(io.MultiWriter(f, progress), &ctxReader{ctx: ctx, stop: s.Xfer.Context(), r: part}, make([]byte, 256<<10))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ctxReader stops reading when the request or the simulator ends.
type ctxReader struct {
	ctx, stop context.Context
	r         io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil || c.stop.Err() != nil {
		return 0, errors.New("upload interrupted")
	}
	return c.r.Read(p)
}

// installUpload checks the received file like the SSVM (the file type
// against the file name, then against the selected format, then the install
// script's checks) and, when it passes, makes the template ready.
func (s *SSVM) installUpload(templateID, zoneID, file, filename string) (int, string) {
	fail := func(status int, text string) (int, string) {
		s.uploadFailed(templateID, zoneID)
		_ = os.Remove(file)
		return status, text
	}
	var format string
	if !s.withCopy(templateID, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.UploadPercent, format = 100, t.Format
	}) {
		_ = os.Remove(file)
		return http.StatusInternalServerError, "upload entity not found"
	}
	found, err := imagecheck.CheckFileType(file, filename)
	if err != nil {
		return fail(http.StatusInternalServerError, "Exception occurred: "+err.Error())
	}
	if found != "" {
		return fail(http.StatusBadRequest, "File type mismatch between the sent file and the actual content. Received: "+found)
	}
	selected := format
	if comp := imagecheck.Compression(filename); comp != imagecheck.None && comp != imagecheck.Xz {
		selected += "." + imagecheck.Extension(comp)
	}
	if found, _ := imagecheck.CheckFileType(file, selected); found != "" {
		return fail(http.StatusInternalServerError, "File type mismatch between uploaded file and selected format. Selected file format: "+
			selected+". Received: "+found)
	}
	info, err := imagecheck.Verify(file, filename, format)
	if err != nil {
		return fail(http.StatusInternalServerError, err.Error())
	}
	// The SSVM's entity is complete; the template becomes ready when the
	// management server's upload monitor next polls.
	s.withCopy(templateID, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.UploadState, cp.UploadSize, cp.UploadPhysicalSize = uploadCompleted, info.VirtualSize, info.PhysicalSize
	})
	return http.StatusOK, "upload successful."
}
