package stemcell

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// UploadTarget is what getUploadParamsForTemplate answers.
type UploadTarget struct {
	URL       string
	Signature string
	Metadata  string
	Expires   string
}

// Upload POSTs the image to the secondary storage VM as one multipart file
// part, streamed from disk with its Content-Length known up front; the
// image is never held in memory (the existing Go CPI buffered all of it).
func Upload(ctx context.Context, client *http.Client, t UploadTarget, img *Image, name string, progress Progress) error {
	f, err := os.Open(img.Path)
	if err != nil {
		return fmt.Errorf("opening stemcell image: %w", err)
	}
	defer f.Close()
	head, tail, err := multipartFrame(name + img.Extension)
	if err != nil {
		return err
	}
	body := io.MultiReader(strings.NewReader(head.text), progress.Reader(f, img.Size), strings.NewReader(tail))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, body)
	if err != nil {
		return fmt.Errorf("upload URL from CloudStack: %w", err)
	}
	req.ContentLength = int64(len(head.text)) + img.Size + int64(len(tail))
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+head.boundary)
	// The exact case matters to older secondary storage VMs.
	req.Header["X-signature"] = []string{t.Signature}
	req.Header["X-metadata"] = []string{t.Metadata}
	req.Header["X-expires"] = []string{t.Expires}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("uploading to the secondary storage VM: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return &UploadRefusedError{Status: resp.StatusCode, Message: strings.TrimSpace(string(msg))}
	}
	return nil
}

// UploadRefusedError is the secondary storage VM saying no.
type UploadRefusedError struct {
	Status  int
	Message string
}

func (e *UploadRefusedError) Error() string {
	return fmt.Sprintf("the secondary storage VM refused the upload (HTTP %d): %s", e.Status, e.Message)
}

type frame struct{ text, boundary string }

// multipartFrame writes what comes before and after the file's bytes, so the
// body's length is known without reading the file.
func multipartFrame(filename string) (frame, string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return frame{}, "", err
	}
	boundary := "bosh-cloudstack-cpi-" + hex.EncodeToString(b)
	head := "--" + boundary + "\r\n" +
		fmt.Sprintf("Content-Disposition: form-data; name=\"file\"; filename=%q\r\n", filename) +
		"Content-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	return frame{text: head, boundary: boundary}, tail, nil
}

// unwrapURL drops the URL net/http puts in its errors: the upload URL is a
// capability for as long as it is valid.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
