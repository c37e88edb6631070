package jsondepth

import "testing"

func TestDeeper(t *testing.T) {
	tests := []struct {
		text  string
		limit int
		want  bool
	}{
		{`1`, 0, false},
		{`[]`, 0, true},
		{`[[1],{"a":[2]}]`, 3, false},
		{`[[1],{"a":[2]}]`, 2, true},
		{`["[[[[", "\"[[[", {"k\\":"{{{"}]`, 2, false},
	}
	for _, tc := range tests {
		if got := DeeperString(tc.text, tc.limit); got != tc.want {
			t.Errorf("DeeperString(%s, %d) = %v, want %v", tc.text, tc.limit, got, tc.want)
		}
		if got := Deeper([]byte(tc.text), tc.limit); got != tc.want {
			t.Errorf("Deeper(%s, %d) = %v, want %v", tc.text, tc.limit, got, tc.want)
		}
	}
}
