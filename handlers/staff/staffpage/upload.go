package staffpage

import (
	"encoding/base64"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"portal/handlers/server"
)

// Staff uploads (a bank statement, a person import) are two posts: the
// chosen file, answered with a preview, and the preview's own form, which
// carries the same file back as a base64 copy to apply it. Nothing is
// kept on the server between the two; the copy is no more trusted than a
// fresh upload (the same staff member could upload any file), and what is
// applied is computed again from it.

// maxStaffUploadBytes bounds an uploaded file.
const maxStaffUploadBytes = 4 << 20

// maxStaffUploadBody bounds the request carrying it: the base64 copy of
// the largest file, and the form around it.
const maxStaffUploadBody = maxStaffUploadBytes*4/3 + 64<<10

// staffUploadPaths are the staff routes that take files; the server's
// 64 KB body limit leaves them to staffUpload's.
var staffUploadPaths = map[string]bool{server.StaffPrefix + server.StaffStatementPath: true, server.StaffPrefix + server.StaffImportPath: true,
	server.StaffPrefix + server.StaffDefinitionsPath: true}

// IsStaffUpload reports whether r posts a file to a staff page.
func IsStaffUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && staffUploadPaths[r.URL.Path]
}

// errUploadMissing and errUploadTooLarge are the problems of an upload
// the page shows by its field.
var (
	errUploadMissing  = errors.New("no file")
	errUploadTooLarge = errors.New("file too large")
)

// UploadProblem is how a page shows an upload's problem by its field:
// the status and which of the page's texts (too large, or no file), and
// ok false for no problem or a failure that is not the upload's (err,
// for the error handler).
func UploadProblem(err error, tooLarge, missing string) (status int, message string, ok bool) {
	switch {
	case errors.Is(err, errUploadTooLarge):
		return http.StatusRequestEntityTooLarge, tooLarge, true
	case errors.Is(err, errUploadMissing):
		return http.StatusUnprocessableEntity, missing, true
	}
	return 0, "", false
}

// StaffUpload reads the file of a staff upload, after requireStaff let
// the request in (no one reads an upload before that): the base64 copy in the
// field copyField (fromCopy: the preview's form, to apply; "" for an
// upload without preview), or else the file chosen in the field "file".
func StaffUpload(c echo.Context, copyField string) (data []byte, fromCopy bool, err error) {
	req := c.Request()
	if req.ContentLength > maxStaffUploadBody {
		// Refused before a byte of it is read; the page that says so
		// finds an empty form (c.FormValue would read the body).
		req.Body, req.Form, req.PostForm = http.NoBody, url.Values{}, url.Values{}
		req.MultipartForm = &multipart.Form{Value: map[string][]string{}, File: map[string][]*multipart.FileHeader{}}
		return nil, false, errUploadTooLarge
	}
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxStaffUploadBody) // a body of unknown length
	// Files over 1 MiB are spooled to temporary files, which
	// removeUploadedFiles deletes when the request ends.
	if err := req.ParseMultipartForm(1 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, false, errUploadTooLarge
		}
		return nil, false, errUploadMissing
	}
	// The fields around the file, checked as checkFormText checks every
	// other form (the file itself is the page's to judge).
	if bad := server.UnplainFields(req.PostForm, ""); len(bad) > 0 {
		return nil, false, server.PlainTextError(bad)
	}
	if v := req.FormValue(copyField); copyField != "" && v != "" {
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(data) > maxStaffUploadBytes {
			return nil, false, errUploadMissing
		}
		return data, true, nil
	}
	fh, err := c.FormFile("file")
	if err != nil {
		return nil, false, errUploadMissing
	}
	if fh.Size > maxStaffUploadBytes {
		return nil, false, errUploadTooLarge
	}
	f, err := fh.Open()
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxStaffUploadBytes+1))
	switch {
	case err != nil:
		return nil, false, err
	case len(data) > maxStaffUploadBytes:
		return nil, false, errUploadTooLarge
	case len(data) == 0:
		return nil, false, errUploadMissing
	}
	return data, false, nil
}

// StaffUploadCopy is the base64 copy a preview's form carries.
func StaffUploadCopy(data []byte) string { return base64.StdEncoding.EncodeToString(data) }
