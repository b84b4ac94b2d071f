package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// filler reads as an endless run of one byte.
type filler byte

func (f filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(f)
	}
	return len(p), nil
}

// countedBody is a request body that counts what the server read of it
// and, with failAfter set, breaks there (a client gone mid-upload).
type countedBody struct {
	r         io.Reader
	read      int64
	failAfter int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	if b.failAfter > 0 && b.read >= b.failAfter {
		return 0, io.ErrUnexpectedEOF
	}
	if b.failAfter > 0 && int64(len(p)) > b.failAfter-b.read {
		p = p[:b.failAfter-b.read]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// multipartUpload is a multipart body of one file of size bytes, made as
// it is read, its media type and its length.
func multipartUpload(size int64) (io.Reader, string, int64) {
	const boundary = "portal-upload-test"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	r := io.MultiReader(strings.NewReader(head), io.LimitReader(filler('a'), size), strings.NewReader(tail))
	return r, "multipart/form-data; boundary=" + boundary, int64(len(head)) + size + int64(len(tail))
}

// upload is one upload sent straight to the server's handler (so that
// what it reads of the body is counted exactly): the caller's cookies
// and headers, a declared length or none (chunked: -1).
type upload struct {
	path      string
	client    *http.Client // its cookies are sent; nil: none
	headers   []string
	size      int64
	chunked   bool
	failAfter int64
}

func sendUpload(env *handlertest.StaffEnv, t *testing.T, u upload) (status int, read int64) {
	t.Helper()
	r, mediaType, length := multipartUpload(u.size)
	body := &countedBody{r: r, failAfter: u.failAfter}
	req := httptest.NewRequest(http.MethodPost, env.Server.URL+u.path, body)
	req.ContentLength = length
	if u.chunked {
		req.ContentLength = -1
	}
	req.Header.Set("Content-Type", mediaType)
	for i := 0; i+1 < len(u.headers); i += 2 {
		req.Header.Set(u.headers[i], u.headers[i+1])
	}
	if u.client != nil {
		base, _ := url.Parse(env.Server.URL)
		for _, c := range u.client.Jar.Cookies(base) {
			req.AddCookie(c)
		}
	}
	rec := httptest.NewRecorder()
	env.Server.Config.Handler.ServeHTTP(rec, req)
	return rec.Code, body.read
}

// emptyTempDir fails the test when dir holds anything.
func emptyTempDir(t *testing.T, dir, after string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, _ := e.Info()
		t.Errorf("%s: %s (%d bytes) left in the temporary folder", after, e.Name(), info.Size())
		_ = os.Remove(dir + "/" + e.Name())
	}
}

// Uploads are read only once the request is authenticated, an oversized
// one is refused before it is read, and no temporary file outlives its
// request: anonymous (401) and under-privileged (403) uploads read
// (almost) nothing, a declared length over the limit is 413 at once, a
// body of unknown length is cut at the limit (413), and neither an upload
// over 1 MiB (spooled to disk) nor one whose client breaks off leaves a
// file in the temporary folder.
func TestUploadsAfterAuthentication(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
		key, _ := env.ApiKey(1, organisation.ScopeWrite)
		bearer := []string{"Authorization", "Bearer " + key}
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp) // os.TempDir: where multipart files are spooled

		const huge = 24 << 20 // over every upload limit (the person import's 16 MiB)
		const nothing = 1 << 10
		staffUploads := []string{"/staff/payments/statement", "/staff/invitations/import", "/staff/processes"}
		apiUploads := []string{"/api/admin/persons/import", "/api/admin/persons/unlink", "/api/admin/periods/1/invitations"}
		for _, path := range append(append([]string{}, staffUploads...), apiUploads...) {
			for _, chunked := range []bool{false, true} {
				name := fmt.Sprintf("%s, chunked %v", path, chunked)
				if status, read := sendUpload(env, t, upload{path: path, size: huge, chunked: chunked}); status != http.StatusUnauthorized || read > nothing {
					t.Errorf("anonymous upload to %s: %d having read %d bytes, want 401 having read nothing", name, status, read)
				}
				emptyTempDir(t, tmp, "anonymous upload to "+name)
			}
		}
		for _, path := range staffUploads {
			if status, read := sendUpload(env, t, upload{path: path, client: viewer, size: huge}); status != http.StatusForbidden || read > nothing {
				t.Errorf("viewer's upload to %s: %d having read %d bytes, want 403 having read nothing", path, status, read)
			}
			if status, read := sendUpload(env, t, upload{path: path, client: admin, size: huge}); status != http.StatusRequestEntityTooLarge || read > nothing {
				t.Errorf("declared oversized upload to %s: %d having read %d bytes, want 413 at once", path, status, read)
			}
			if status, read := sendUpload(env, t, upload{path: path, client: admin, size: huge, chunked: true}); status != http.StatusRequestEntityTooLarge || read > 6<<20 {
				t.Errorf("oversized upload of unknown length to %s: %d having read %d bytes, want 413 at the limit", path, status, read)
			}
			emptyTempDir(t, tmp, "oversized upload to "+path)
			// 2 MiB: over the API's 64 KiB and over the 1 MiB kept in memory.
			if status, _ := sendUpload(env, t, upload{path: path, client: admin, size: 2 << 20}); status == http.StatusUnauthorized || status == http.StatusForbidden ||
				status == http.StatusRequestEntityTooLarge || status >= 500 {
				t.Errorf("upload of 2 MiB to %s: %d, want it read (and refused as no valid file)", path, status)
			}
			emptyTempDir(t, tmp, "upload of 2 MiB to "+path)
			if status, _ := sendUpload(env, t, upload{path: path, client: admin, size: 3 << 20, failAfter: 2 << 20}); status < 400 {
				t.Errorf("upload broken off to %s: %d", path, status)
			}
			emptyTempDir(t, tmp, "upload broken off to "+path)
		}
		for _, path := range apiUploads {
			// The bulk calls take JSON or CSV: a form is refused unread.
			for _, headers := range [][]string{bearer, {"Origin", env.Server.URL}} {
				client := admin
				if len(headers) > 0 && headers[0] == "Authorization" {
					client = nil
				}
				status, read := sendUpload(env, t, upload{path: path, client: client, headers: headers, size: 2 << 20})
				if status != http.StatusUnsupportedMediaType || read > nothing {
					t.Errorf("form posted to %s: %d having read %d bytes, want 415 unread", path, status, read)
				}
				if status, read := sendUpload(env, t, upload{path: path, client: client, headers: headers, size: huge}); status != http.StatusRequestEntityTooLarge || read > nothing {
					t.Errorf("declared oversized body to %s: %d having read %d bytes, want 413 at once", path, status, read)
				}
			}
			emptyTempDir(t, tmp, "form posted to "+path)
		}
	})
}
