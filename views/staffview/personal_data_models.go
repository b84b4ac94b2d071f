package staffview

import (
	"portal/views"
)

// PersonDataModel is the staff page of one person's data.
type PersonDataModel struct {
	Chrome
	T      *views.PersonalDataTexts
	Name   string
	Tables []views.DataTable
	// DownloadURL is the JSON export; EraseURL where the erasure posts,
	// "" when the staff member may not erase or the person is erased.
	DownloadURL, EraseURL string
}

// DataRequestsModel is the staff list of members' data requests.
type DataRequestsModel struct {
	Chrome
	T    *views.PersonalDataTexts
	Rows []DataRequestRow
}

// DataRequestRow is one request of the list.
type DataRequestRow struct {
	ID                                        string
	Created, Household, Kind, Message, Status string
	Person, PersonURL                         string
	Done, Note                                string
	// DoneURL is where "mark done" posts; "" once done.
	DoneURL string
}
