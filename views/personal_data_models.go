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
