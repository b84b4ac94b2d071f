package memberview

import (
	"portal/views"
)

// PersonalDataModel is the member's "Your data" page.
type PersonalDataModel struct {
	views.Chrome
	T      *views.PersonalDataTexts
	Tables []views.DataTable
	// DownloadURL is the JSON export; RequestURL where the request form posts.
	DownloadURL, RequestURL string
	Persons                 []views.DataChoice
	// Notice is the thanks after a request; Problem a refused request.
	Notice, Problem string
}
