package views

// DataTable is one part of a person's or household's data shown as a
// table: a heading, the column names and the rows, each cell a text
// already written in the page's language.
type DataTable struct {
	TestID, Heading string
	Columns         []string
	Rows            [][]string
}

// DataChoice is one option of a select.
type DataChoice struct {
	Value, Label string
}

// PersonalDataModel is the member's "Your data" page.
type PersonalDataModel struct {
	Chrome
	T      *PersonalDataTexts
	Tables []DataTable
	// DownloadURL is the JSON export; RequestURL where the request form posts.
	DownloadURL, RequestURL string
	Persons                 []DataChoice
	// Notice is the thanks after a request; Problem a refused request.
	Notice, Problem string
}

// StaffPersonDataModel is the staff page of one person's data.
type StaffPersonDataModel struct {
	StaffChrome
	T      *PersonalDataTexts
	Name   string
	Tables []DataTable
	// DownloadURL is the JSON export; EraseURL where the erasure posts,
	// "" when the staff member may not erase or the person is erased.
	DownloadURL, EraseURL string
}

// StaffDataRequestsModel is the staff list of members' data requests.
type StaffDataRequestsModel struct {
	StaffChrome
	T    *PersonalDataTexts
	Rows []StaffDataRequestRow
}

// StaffDataRequestRow is one request of the list.
type StaffDataRequestRow struct {
	ID                                        string
	Created, Household, Kind, Message, Status string
	Person, PersonURL                         string
	Done, Note                                string
	// DoneURL is where "mark done" posts; "" once done.
	DoneURL string
}
