package banking

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCreditorID is the Deutsche Bundesbank's published test creditor
// identifier.
const testCreditorID = "DE98ZZZ09999999999"

// seasonFile is a club's collection run: first debits on two dates, a
// recurring one, a one-off, and amendments of every kind.
func seasonFile(version string) DirectDebitFile {
	return DirectDebitFile{
		Version:   version,
		MessageID: "RUN-2026-11-27-1",
		Created:   time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC),
		Creditor: DirectDebitCreditor{
			Name: "Turnverein Jahn München e.V.", IBAN: "DE89 3704 0044 0532 0130 00",
			BIC: "COBADEFFXXX", CreditorID: "de98 zzz0 9999 9999 99",
		},
		Debits: []DirectDebit{
			{EndToEndID: "ORDER-101", AmountCents: 12000, Sequence: SequenceFirst, DueDate: day("2026-12-15"),
				MandateID: "TVJ-101", MandateSigned: day("2026-11-20"), DebtorName: "Jürgen Größer-Weiß",
				DebtorIBAN: "DE02120300000000202051", RemittanceText: "Mitgliedsbeitrag 2027 Bestellung 101"},
			{EndToEndID: "ORDER-102", AmountCents: 4550, Sequence: SequenceFirst, DueDate: day("2026-12-15"),
				MandateID: "TVJ-102", MandateSigned: day("2026-11-21"), DebtorName: "Françoise Lefèvre-Œuvray",
				DebtorIBAN: "FR1420041010050500013M02606", DebtorBIC: "PSSTFRPPLIL", RemittanceText: "Cotisation 2027"},
			{EndToEndID: "ORDER-103", AmountCents: 9999, Sequence: SequenceRecurring, DueDate: day("2026-12-15"),
				MandateID: "TVJ-90", MandateSigned: day("2025-10-01"), DebtorName: "Łukasz Żółć",
				DebtorIBAN: "AT611904300234573201", RemittanceText: "Beitrag 2027",
				Amendment: &MandateAmendment{OriginalDebtorIBAN: "AT483200000012345864"}},
			{EndToEndID: "ORDER-104", AmountCents: 1, Sequence: SequenceFirst, DueDate: day("2026-12-18"),
				MandateID: "TVJ-104", MandateSigned: day("2026-11-22"), DebtorName: "Søren Ærø",
				DebtorIBAN: "NL91ABNA0417164300",
				Amendment:  &MandateAmendment{ChangedBank: true}},
			{EndToEndID: "ORDER-105", AmountCents: 250000, Sequence: SequenceOneOff, DueDate: day("2026-12-15"),
				MandateID: "TVJ-105", MandateSigned: day("2026-11-23"), DebtorName: "Anna Novák",
				DebtorIBAN: "DE89370400440532013000", RemittanceText: "Kursgebühr",
				Amendment: &MandateAmendment{OriginalMandateID: "OLD/105", OriginalCreditorID: "DE98ZZZ09999999999", OriginalCreditorName: "Förderverein"}},
			{EndToEndID: "ORDER-106", AmountCents: 3000, Sequence: SequenceRecurring, DueDate: day("2026-12-15"),
				MandateID: "TVJ-91", MandateSigned: day("2025-10-02"), DebtorName: "Eva Ruiz",
				DebtorIBAN: "DE02120300000000202051", RemittanceText: "Beitrag 2027"},
		},
	}
}

// readPain is what the tests read back from a written pain.008.
type readPain struct {
	XMLName xml.Name
	GrpHdr  struct {
		MsgId    string
		CreDtTm  string
		NbOfTxs  int
		CtrlSum  string
		InitgPty struct{ Nm string }
	} `xml:"CstmrDrctDbtInitn>GrpHdr"`
	PmtInf []struct {
		PmtInfId     string
		PmtMtd       string
		NbOfTxs      int
		CtrlSum      string
		SvcLvl       string `xml:"PmtTpInf>SvcLvl>Cd"`
		LclInstrm    string `xml:"PmtTpInf>LclInstrm>Cd"`
		SeqTp        string `xml:"PmtTpInf>SeqTp"`
		ReqdColltnDt string
		Cdtr         string `xml:"Cdtr>Nm"`
		CdtrIBAN     string `xml:"CdtrAcct>Id>IBAN"`
		CdtrBICFI    string `xml:"CdtrAgt>FinInstnId>BICFI"`
		CdtrBIC      string `xml:"CdtrAgt>FinInstnId>BIC"`
		ChrgBr       string
		CI           string `xml:"CdtrSchmeId>Id>PrvtId>Othr>Id"`
		CIScheme     string `xml:"CdtrSchmeId>Id>PrvtId>Othr>SchmeNm>Prtry"`
		Tx           []struct {
			EndToEndId string `xml:"PmtId>EndToEndId"`
			Amt        struct {
				Value string `xml:",chardata"`
				Ccy   string `xml:"Ccy,attr"`
			} `xml:"InstdAmt"`
			MndtId      string `xml:"DrctDbtTx>MndtRltdInf>MndtId"`
			DtOfSgntr   string `xml:"DrctDbtTx>MndtRltdInf>DtOfSgntr"`
			AmdmntInd   string `xml:"DrctDbtTx>MndtRltdInf>AmdmntInd"`
			OrgnlMndtId string `xml:"DrctDbtTx>MndtRltdInf>AmdmntInfDtls>OrgnlMndtId"`
			OrgnlCI     string `xml:"DrctDbtTx>MndtRltdInf>AmdmntInfDtls>OrgnlCdtrSchmeId>Id>PrvtId>Othr>Id"`
			OrgnlCINm   string `xml:"DrctDbtTx>MndtRltdInf>AmdmntInfDtls>OrgnlCdtrSchmeId>Nm"`
			OrgnlIBAN   string `xml:"DrctDbtTx>MndtRltdInf>AmdmntInfDtls>OrgnlDbtrAcct>Id>IBAN"`
			OrgnlAgt    string `xml:"DrctDbtTx>MndtRltdInf>AmdmntInfDtls>OrgnlDbtrAgt>FinInstnId>Othr>Id"`
			DbtrBICFI   string `xml:"DbtrAgt>FinInstnId>BICFI"`
			DbtrBIC     string `xml:"DbtrAgt>FinInstnId>BIC"`
			DbtrAgtOthr string `xml:"DbtrAgt>FinInstnId>Othr>Id"`
			Dbtr        string `xml:"Dbtr>Nm"`
			DbtrIBAN    string `xml:"DbtrAcct>Id>IBAN"`
			Ustrd       string `xml:"RmtInf>Ustrd"`
		} `xml:"DrctDbtTxInf"`
	} `xml:"CstmrDrctDbtInitn>PmtInf"`
}

func writePain(t *testing.T, f DirectDebitFile) ([]byte, readPain) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteDirectDebits(&b, f); err != nil {
		t.Fatalf("WriteDirectDebits: %v", err)
	}
	var p readPain
	if err := xml.Unmarshal(b.Bytes(), &p); err != nil {
		t.Fatalf("written file does not parse: %v\n%s", err, b.String())
	}
	return b.Bytes(), p
}

// cents reads a written amount back.
func cents(t *testing.T, s string) int64 {
	t.Helper()
	m, err := parseMinor(s, "EUR")
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return m
}

// The written files are valid documents of the official ISO 20022
// schemas, in both versions.
func TestDirectDebitFileValidatesAgainstISOSchema(t *testing.T) {
	for _, version := range []string{Pain008V08, Pain008V02} {
		t.Run(version, func(t *testing.T) {
			doc, _ := writePain(t, seasonFile(version))
			if msg := validateXSD(t, version+".xsd", doc); msg != "" {
				t.Fatalf("%s does not validate:\n%s\n%s", version, msg, doc)
			}
			// The schema test can fail: the other version's schema refuses it.
			other := Pain008V02
			if version == Pain008V02 {
				other = Pain008V08
			}
			if msg := validateXSD(t, other+".xsd", doc); msg == "" {
				t.Fatalf("a %s file validated against %s", version, other)
			}
		})
	}
}

// Counts, sums, grouping, sequence types and mandate data of a written file
// are the input's.
func TestDirectDebitFileContents(t *testing.T) {
	for _, version := range []string{"", Pain008V08, Pain008V02} {
		t.Run("version "+version, func(t *testing.T) {
			f := seasonFile(version)
			doc, p := writePain(t, f)
			want := version
			if want == "" {
				want = Pain008V08
			}
			if p.XMLName.Space != "urn:iso:std:iso:20022:tech:xsd:"+want {
				t.Errorf("namespace %q, want %s", p.XMLName.Space, want)
			}
			if p.GrpHdr.MsgId != f.MessageID || p.GrpHdr.CreDtTm != "2026-11-27T09:30:00" {
				t.Errorf("group header %+v", p.GrpHdr)
			}
			if p.GrpHdr.InitgPty.Nm != "Turnverein Jahn Munchen e.V." {
				t.Errorf("initiating party %q", p.GrpHdr.InitgPty.Nm)
			}
			var total int64
			for _, d := range f.Debits {
				total += d.AmountCents
			}
			if p.GrpHdr.NbOfTxs != len(f.Debits) || cents(t, p.GrpHdr.CtrlSum) != total || p.GrpHdr.CtrlSum != "2795.50" {
				t.Errorf("group header counts %d debits of %s, want %d of %d cents", p.GrpHdr.NbOfTxs, p.GrpHdr.CtrlSum, len(f.Debits), total)
			}
			// One block per sequence type and due date, FRST first.
			var groups []string
			byE2E := map[string]DirectDebit{}
			for _, d := range f.Debits {
				byE2E[d.EndToEndID] = d
			}
			seen := 0
			for _, pi := range p.PmtInf {
				groups = append(groups, pi.SeqTp+" "+pi.ReqdColltnDt+" "+strconv.Itoa(pi.NbOfTxs))
				var sum int64
				for _, tx := range pi.Tx {
					d, ok := byE2E[tx.EndToEndId]
					if !ok {
						t.Fatalf("unknown end-to-end id %q", tx.EndToEndId)
					}
					seen++
					sum += cents(t, tx.Amt.Value)
					if cents(t, tx.Amt.Value) != d.AmountCents || tx.Amt.Ccy != "EUR" {
						t.Errorf("%s: amount %s %s, want %d cents", d.EndToEndID, tx.Amt.Value, tx.Amt.Ccy, d.AmountCents)
					}
					if pi.SeqTp != string(d.Sequence) || pi.ReqdColltnDt != d.DueDate.Format(time.DateOnly) {
						t.Errorf("%s in block %s %s", d.EndToEndID, pi.SeqTp, pi.ReqdColltnDt)
					}
					if tx.MndtId != d.MandateID || tx.DtOfSgntr != d.MandateSigned.Format(time.DateOnly) {
						t.Errorf("%s: mandate %s of %s", d.EndToEndID, tx.MndtId, tx.DtOfSgntr)
					}
					wantInd := "false"
					if d.Amendment != nil {
						wantInd = "true"
					}
					if tx.AmdmntInd != wantInd {
						t.Errorf("%s: AmdmntInd %q", d.EndToEndID, tx.AmdmntInd)
					}
					if tx.DbtrIBAN != strings.ReplaceAll(d.DebtorIBAN, " ", "") {
						t.Errorf("%s: debtor IBAN %q", d.EndToEndID, tx.DbtrIBAN)
					}
					bic := tx.DbtrBICFI
					if version == Pain008V02 {
						bic = tx.DbtrBIC
					}
					if tx.DbtrBICFI != "" && tx.DbtrBIC != "" {
						t.Errorf("%s: both BIC and BICFI", d.EndToEndID)
					}
					switch {
					case d.DebtorBIC == "" && (bic != "" || tx.DbtrAgtOthr != "NOTPROVIDED"):
						t.Errorf("%s: debtor agent %q/%q, want NOTPROVIDED", d.EndToEndID, bic, tx.DbtrAgtOthr)
					case d.DebtorBIC != "" && bic != d.DebtorBIC:
						t.Errorf("%s: debtor BIC %q", d.EndToEndID, bic)
					}
				}
				if pi.NbOfTxs != len(pi.Tx) || cents(t, pi.CtrlSum) != sum {
					t.Errorf("block %s: NbOfTxs %d CtrlSum %s, has %d debits of %d cents", pi.PmtInfId, pi.NbOfTxs, pi.CtrlSum, len(pi.Tx), sum)
				}
				if pi.PmtMtd != "DD" || pi.SvcLvl != "SEPA" || pi.LclInstrm != "CORE" || pi.ChrgBr != "SLEV" {
					t.Errorf("block %s: %s %s %s %s", pi.PmtInfId, pi.PmtMtd, pi.SvcLvl, pi.LclInstrm, pi.ChrgBr)
				}
				if pi.CI != testCreditorID || pi.CIScheme != "SEPA" || pi.CdtrIBAN != "DE89370400440532013000" {
					t.Errorf("block %s: creditor %s %s %s", pi.PmtInfId, pi.CI, pi.CIScheme, pi.CdtrIBAN)
				}
				cbic := pi.CdtrBICFI
				if version == Pain008V02 {
					cbic = pi.CdtrBIC
				}
				if cbic != "COBADEFFXXX" {
					t.Errorf("block %s: creditor BIC %q (BICFI %q, BIC %q)", pi.PmtInfId, cbic, pi.CdtrBICFI, pi.CdtrBIC)
				}
			}
			if seen != len(f.Debits) {
				t.Errorf("%d debits written, want %d", seen, len(f.Debits))
			}
			wantGroups := []string{"FRST 2026-12-15 2", "FRST 2026-12-18 1", "RCUR 2026-12-15 2", "OOFF 2026-12-15 1"}
			if strings.Join(groups, "|") != strings.Join(wantGroups, "|") {
				t.Errorf("blocks %q, want %q", groups, wantGroups)
			}
			s := string(doc)
			for _, want := range []string{
				"<Nm>Jurgen Groser-Weis</Nm>", "<Nm>Francoise Lefevre-Ouvray</Nm>", "<Nm>Lukasz Zolc</Nm>", "<Nm>Soren Aro</Nm>",
				"<OrgnlDbtrAcct>\n", "<IBAN>AT483200000012345864</IBAN>",
				"<OrgnlDbtrAgt>\n", "<Id>SMNDA</Id>",
				"<OrgnlMndtId>OLD/105</OrgnlMndtId>", "<Nm>Forderverein</Nm>",
				"<Ustrd>Mitgliedsbeitrag 2027 Bestellung 101</Ustrd>",
			} {
				if !strings.Contains(s, want) {
					t.Errorf("file lacks %q", want)
				}
			}
		})
	}
}

// The same run written twice is the same file.
func TestDirectDebitFileDeterministic(t *testing.T) {
	a, _ := writePain(t, seasonFile(""))
	for range 5 {
		b, _ := writePain(t, seasonFile(""))
		if !bytes.Equal(a, b) {
			t.Fatal("the same input gave two different files")
		}
	}
}

// Bad input is refused with an error that names the debit and the problem,
// and nothing is written.
func TestDirectDebitFileRefusesBadInput(t *testing.T) {
	cases := []struct {
		name   string
		change func(*DirectDebitFile)
		want   string
	}{
		{"invalid debtor IBAN", func(f *DirectDebitFile) { f.Debits[1].DebtorIBAN = "DE02120300000000202052" }, "debit 2 (ORDER-102): debtor IBAN"},
		{"non-SEPA debtor IBAN", func(f *DirectDebitFile) { f.Debits[0].DebtorIBAN = "BR1800360305000010009795493C1" }, "not a SEPA country"},
		{"invalid creditor IBAN", func(f *DirectDebitFile) { f.Creditor.IBAN = "DE89370400440532013001" }, "creditor IBAN"},
		{"invalid creditor identifier", func(f *DirectDebitFile) { f.Creditor.CreditorID = "DE97ZZZ09999999999" }, "creditor identifier"},
		{"mandate reference outside the set", func(f *DirectDebitFile) { f.Debits[2].MandateID = "TVJ_90" }, "debit 3 (ORDER-103): mandate reference \"TVJ_90\" contains '_'"},
		{"mandate reference with umlaut", func(f *DirectDebitFile) { f.Debits[2].MandateID = "MÜ-1" }, "outside the SEPA character set"},
		{"unknown sequence type", func(f *DirectDebitFile) { f.Debits[0].Sequence = "NEXT" }, "sequence type \"NEXT\""},
		{"zero amount", func(f *DirectDebitFile) { f.Debits[0].AmountCents = 0 }, "amount 0.00 is not more than zero"},
		{"negative amount", func(f *DirectDebitFile) { f.Debits[0].AmountCents = -5 }, "not more than zero"},
		{"missing due date", func(f *DirectDebitFile) { f.Debits[0].DueDate = time.Time{} }, "due date is missing"},
		{"signed after due", func(f *DirectDebitFile) { f.Debits[0].MandateSigned = day("2027-01-01") }, "after the due date"},
		{"missing signature date", func(f *DirectDebitFile) { f.Debits[0].MandateSigned = time.Time{} }, "date of signature is missing"},
		{"duplicate end-to-end id", func(f *DirectDebitFile) { f.Debits[1].EndToEndID = "ORDER-101" }, "also debit 1's"},
		{"end-to-end id with //", func(f *DirectDebitFile) { f.Debits[1].EndToEndID = "A//B" }, "end-to-end id \"A//B\" must not"},
		{"no debits", func(f *DirectDebitFile) { f.Debits = nil }, "no debits"},
		{"unknown version", func(f *DirectDebitFile) { f.Version = "pain.008.001.09" }, "version"},
		{"Swiss debtor without BIC", func(f *DirectDebitFile) { f.Debits[0].DebtorIBAN = "CH9300762011623852957" }, "debtor BIC is required for an account in CH"},
		{"bad debtor BIC", func(f *DirectDebitFile) { f.Debits[1].DebtorBIC = "PSST" }, "debtor BIC"},
		{"empty amendment", func(f *DirectDebitFile) { f.Debits[0].Amendment = &MandateAmendment{} }, "amendment says nothing changed"},
		{"bad original creditor id", func(f *DirectDebitFile) { f.Debits[4].Amendment.OriginalCreditorID = "XX00" }, "original creditor identifier"},
		{"missing debtor name", func(f *DirectDebitFile) { f.Debits[0].DebtorName = " " }, "debtor name is missing"},
		{"missing message id", func(f *DirectDebitFile) { f.MessageID = "" }, "message id is empty"},
		{"missing creation time", func(f *DirectDebitFile) { f.Created = time.Time{} }, "creation time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := seasonFile("")
			c.change(&f)
			var b bytes.Buffer
			err := WriteDirectDebits(&b, f)
			if err == nil {
				t.Fatalf("no error; wrote\n%s", b.String())
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes despite the error", b.Len())
			}
		})
	}
}
