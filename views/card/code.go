package card

import (
	"errors"

	"rsc.io/qr/coding"
)

// qrCode is a QR code's modules, dark or light, row by row.
type qrCode struct {
	size int
	dark []bool // size × size, row by row
}

func (c *qrCode) at(col, row int) bool { return c.dark[row*c.size+col] }

// encodeQR is text as a QR code at level M (15% of the code may be lost),
// in the smallest version that holds it, with the mask of least penalty
// (ISO/IEC 18004, 7.8.3): the code a scanner reads most reliably.
//
// Why not boombuler's encoder, which the bank transfer's code uses: it
// scores each mask through an image interface, a fifth of a card's
// rendering, and a season opening renders one card per member. rsc.io/qr
// builds the code for a given mask (its own Encode always takes mask 0);
// the penalties are counted here on a plain grid.
func encodeQR(text string) (*qrCode, error) {
	enc := coding.String(text)
	v := coding.Version(coding.MinVersion)
	for ; enc.Bits(v) > v.DataBytes(coding.M)*8; v++ {
		if v == coding.MaxVersion {
			return nil, errors.New("text too long for a QR code")
		}
	}
	var best *qrCode
	bestPenalty := 0
	for mask := range coding.Mask(8) {
		plan, err := coding.NewPlan(v, coding.M, mask)
		if err != nil {
			return nil, err
		}
		code, err := plan.Encode(enc)
		if err != nil {
			return nil, err
		}
		c := &qrCode{size: code.Size, dark: make([]bool, code.Size*code.Size)}
		for row := range code.Size {
			for col := range code.Size {
				c.dark[row*code.Size+col] = code.Black(col, row)
			}
		}
		if p := c.penalty(); best == nil || p < bestPenalty {
			best, bestPenalty = c, p
		}
	}
	return best, nil
}

// penalty scores the code's patterns that a scanner may misread
// (ISO/IEC 18004, 7.8.3.1); the encoder keeps the mask that scores least.
//   - N1: a run of five or more modules of one colour in a row or a
//     column, 3 and 1 for each module beyond five;
//   - N2: each 2 × 2 block of one colour, 3;
//   - N3: the finder's 1:1:3:1:1 dark-light pattern with four light
//     modules before or after it in a row or a column, 40 (the light
//     quiet zone around the code counts);
//   - N4: 10 for each full 5% the dark modules are away from half.
func (c *qrCode) penalty() int {
	n := c.size
	score := 0
	line := make([]bool, n)
	for _, across := range []bool{true, false} {
		for i := range n {
			for j := range n {
				if across {
					line[j] = c.at(j, i)
				} else {
					line[j] = c.at(i, j)
				}
			}
			score += runPenalty(line) + finderPenalty(line)
		}
	}
	dark := 0
	for row := range n {
		for col := range n {
			d := c.at(col, row)
			if d {
				dark++
			}
			if row+1 < n && col+1 < n && c.at(col+1, row) == d && c.at(col, row+1) == d && c.at(col+1, row+1) == d {
				score += 3
			}
		}
	}
	deviation := 2*dark - n*n // twice the dark modules beyond half
	if deviation < 0 {
		deviation = -deviation
	}
	return score + deviation*10/(n*n)*10
}

// runPenalty is N1 over one row or column.
func runPenalty(line []bool) int {
	score := 0
	for i := 0; i < len(line); {
		j := i
		for j < len(line) && line[j] == line[i] {
			j++
		}
		if length := j - i; length >= 5 {
			score += 3 + length - 5
		}
		i = j
	}
	return score
}

// finder is the 1:1:3:1:1 pattern N3 looks for.
var finder = [7]bool{true, false, true, true, true, false, true}

// finderPenalty is N3 over one row or column, outside it light.
func finderPenalty(line []bool) int {
	light := func(from, to int) bool {
		for k := from; k < to; k++ {
			if k >= 0 && k < len(line) && line[k] {
				return false
			}
		}
		return true
	}
	score := 0
	for i := 0; i+len(finder) <= len(line); i++ {
		match := true
		for k, d := range finder {
			if line[i+k] != d {
				match = false
				break
			}
		}
		if match && (light(i-4, i) || light(i+len(finder), i+len(finder)+4)) {
			score += 40
		}
	}
	return score
}
