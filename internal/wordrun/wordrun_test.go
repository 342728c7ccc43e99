package wordrun

import (
	"bytes"
	"reflect"
	"testing"
)

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"SET ... NX, then PX!", []string{"set", "nx", "then", "px"}},
		{"lock:invoice:7 don’t", []string{"lock", "invoice", "7", "don", "t"}},
		{"  ", []string{}},
	} {
		if got := Words(tt.in); len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("Words(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestRunsStayInSegments(t *testing.T) {
	got := Runs(3, "a b c d", "e f")
	want := []string{"a b c", "b c d"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Runs(3, %q, %q) = %q; want %q", "a b c d", "e f", got, want)
	}
}

// TestShared checks the property the course tests rely on: a run of n
// words is found whatever its case and punctuation, a run of n-1 is not.
func TestShared(t *testing.T) {
	card := DigestSet(10, "one two three four five six seven eight nine ten eleven")
	for _, tt := range []struct {
		name string
		text string
		want int
	}{
		{"ten words, other case and punctuation", "Zero: One, two; THREE four (five) six seven-eight nine ten.", 1},
		{"eleven words", "one two three four five six seven eight nine ten eleven", 2},
		{"nine words", "one two three four five six seven eight nine", 0},
		{"ten words with one changed", "one two three four five six seven eight nine tan eleven", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := card.Shared(10, tt.text); len(got) != tt.want {
				t.Errorf("Shared(%q) = %q; want %d runs", tt.text, got, tt.want)
			}
		})
	}
}

func TestSetRoundTrip(t *testing.T) {
	s := DigestSet(2, "a b c")
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSet(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("ReadSet(Write(s)) = %v; want %v", back, s)
	}
}

func TestHTMLSegments(t *testing.T) {
	got := HTMLSegments(`<p>Before &amp; after</p><pre><code>SET k v</code></pre><li>a</li><li>b</li>`)
	if len(got) != 2 || !reflect.DeepEqual(Words(got[0]), []string{"before", "after"}) || !reflect.DeepEqual(Words(got[1]), []string{"a", "b"}) {
		t.Errorf("HTMLSegments = %q; want the prose on either side of the code, code left out", got)
	}
}
